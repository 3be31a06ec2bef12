import Fastify, { LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { checkReadiness } from '@gatehouse/telemetry';
import type { GatehouseMetrics, Logger, ReadinessCheck } from '@gatehouse/telemetry';

export interface OpsServerOptions {
  readonly logger: Logger;
  readonly metrics: GatehouseMetrics;
  /** What `/readyz` asks, by dependency name; each bounded by `timeoutMs`. */
  readonly checks: Readonly<Record<string, ReadinessCheck>>;
  readonly timeoutMs?: number;
}

/**
 * The executor's operations endpoint: `/healthz` (the process is up), `/readyz` (every dependency
 * answers; a 503 names the ones that do not) and `/metrics` (Prometheus text).
 */
export function buildOpsServer(options: OpsServerOptions): FastifyInstance {
  const loggerInstance: FastifyBaseLogger = options.logger.child({ api: 'ops' });
  // Probes and scrapes every few seconds are not worth a log line each.
  const app = Fastify({ loggerInstance, logController: new LogController({ disableRequestLogging: true }) });
  const { metrics } = options;
  app.get('/healthz', () => ({ status: 'up' }));
  app.get('/readyz', async (_request, reply) => {
    const readiness = await checkReadiness(options.checks, options.timeoutMs ?? 2_000);
    return reply.code(readiness.ready ? 200 : 503).send(readiness);
  });
  app.get('/metrics', async (_request, reply) => reply.type(metrics.contentType).send(await metrics.scrape()));
  return app;
}
