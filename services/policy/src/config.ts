import type { ReplicaBarrier } from '@gatehouse/state';
import type { EventsConfig, SigningKey } from '@gatehouse/events';
import { ConfigError, eventsConfigOf, readConfig, variablesReadBy } from '@gatehouse/runtime';
import type { Env } from '@gatehouse/runtime';
import type { TracingOptions } from '@gatehouse/telemetry';

export interface PolicyConfig {
  readonly events: EventsConfig;
  readonly redisUrl: string;
  /** The replicas a durable Redis write waits for (GATEHOUSE_REDIS_WAIT_REPLICAS, _TIMEOUT_MS); 0 replicas: none. */
  readonly redisBarrier: ReplicaBarrier;
  readonly redisPrefix: string;
  readonly host: string;
  readonly port: number;
  /** The local-development control token, when set. */
  readonly controlToken: string | undefined;
  /** The identity provider trusted code proves itself to, and what its tokens must carry. */
  readonly oidc: { readonly issuer: string; readonly audience: string; readonly scope: string } | undefined;
  /** The executors' client at the IdP (GATEHOUSE_EXCHANGE_CLIENT_ID): a person's token handed to a run must name it in `aud`. */
  readonly exchangeClientId: string | undefined;
  readonly signingKey: SigningKey;
  /** The tool pack to host (GATEHOUSE_TOOL_PACK). */
  readonly toolPack: string | undefined;
  /** Files that replace the pack's roles and policy table, when set. */
  readonly rolesFile: string | undefined;
  readonly policyTableFile: string | undefined;
  readonly maxArgumentBytes: number;
  readonly maxRunTtlMs: number;
  readonly groupId: string;
  readonly concurrency: number;
  readonly sessionTimeoutMs: number;
  /** How long a proposal the policy service drafts stays valid: the executor's GATEHOUSE_PROPOSAL_TTL_MS. */
  readonly proposalTtlMs: number;
  /** Span export over OTLP (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME); off without an endpoint. */
  readonly tracing: TracingOptions;
}

const VARIABLES = variablesReadBy('policy');

/** Reads and checks the policy service's settings once, at start-up (by @gatehouse/runtime's schema). */
export function policyConfigFromEnv(env: Env = process.env): PolicyConfig {
  const c = readConfig(VARIABLES, env, 'policy');
  if (c.GATEHOUSE_OIDC_ISSUER === undefined && c.GATEHOUSE_CONTROL_TOKEN === undefined) {
    throw new ConfigError([
      {
        variable: 'GATEHOUSE_OIDC_ISSUER',
        reason:
          'required unless GATEHOUSE_CONTROL_TOKEN is set: trusted code that registers runs proves itself to the IdP (client credentials)',
      },
    ]);
  }
  const events = eventsConfigOf(c);
  return {
    events,
    redisUrl: c.REDIS_URL,
    redisBarrier: { replicas: c.GATEHOUSE_REDIS_WAIT_REPLICAS, timeoutMs: c.GATEHOUSE_REDIS_WAIT_TIMEOUT_MS },
    redisPrefix: c.GATEHOUSE_REDIS_PREFIX,
    host: c.POLICY_HOST,
    port: c.POLICY_PORT,
    controlToken: c.GATEHOUSE_CONTROL_TOKEN,
    oidc:
      c.GATEHOUSE_OIDC_ISSUER === undefined
        ? undefined
        : { issuer: c.GATEHOUSE_OIDC_ISSUER, audience: c.POLICY_OIDC_AUDIENCE, scope: c.POLICY_RUNS_SCOPE },
    exchangeClientId: c.GATEHOUSE_EXCHANGE_CLIENT_ID,
    signingKey: c.GATEHOUSE_SIGNING_KEY,
    toolPack: c.GATEHOUSE_TOOL_PACK,
    rolesFile: c.GATEHOUSE_ROLES_FILE,
    policyTableFile: c.GATEHOUSE_POLICY_TABLE_FILE,
    maxArgumentBytes: c.GATEHOUSE_MAX_ARGUMENT_BYTES,
    maxRunTtlMs: c.GATEHOUSE_MAX_RUN_TTL_MS,
    // Deployments sharing a cluster under different topic prefixes must not share a group.
    groupId: c.POLICY_GROUP_ID ?? `${events.topicPrefix}gatehouse-policy`,
    concurrency: c.POLICY_CONCURRENCY,
    // How soon the group notices a dead instance and hands its partitions to the others.
    sessionTimeoutMs: c.POLICY_SESSION_TIMEOUT_MS,
    proposalTtlMs: c.GATEHOUSE_PROPOSAL_TTL_MS,
    tracing: { serviceName: c.OTEL_SERVICE_NAME ?? 'gatehouse-policy', endpoint: c.OTEL_EXPORTER_OTLP_ENDPOINT },
  };
}
