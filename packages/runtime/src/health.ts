import { checkReadiness } from '@gatehouse/telemetry';
import type { Readiness, ReadinessCheck } from '@gatehouse/telemetry';

/** An HTTP answer, whatever server sends it (fastify for the APIs, node:http for the ops server). */
export interface HealthAnswer<B> {
  readonly statusCode: 200 | 503;
  readonly body: B;
}

/** The body of `/healthz`. */
export interface Liveness {
  readonly status: 'up';
}

/** `/healthz` and `/readyz` of every service: one shape each, whichever service answers. */
export interface Health {
  /** The process answers. It asks no dependency: an outage must not get live processes restarted. */
  readonly live: () => HealthAnswer<Liveness>;
  /** 200 when every check answers `ok`, else 503; the body names each check's answer (`{ ready, checks }`). */
  readonly ready: () => Promise<HealthAnswer<Readiness>>;
}

const LIVE: HealthAnswer<Liveness> = { statusCode: 200, body: { status: 'up' } };

/** The health endpoints over `checks`, each check bounded by `timeoutMs`. */
export function healthOf(checks: Readonly<Record<string, ReadinessCheck>>, timeoutMs = 2_000): Health {
  return {
    live: () => LIVE,
    ready: async () => {
      const readiness = await checkReadiness(checks, timeoutMs);
      return { statusCode: readiness.ready ? 200 : 503, body: readiness };
    },
  };
}
