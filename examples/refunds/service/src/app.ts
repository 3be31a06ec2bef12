import { fastify } from 'fastify';
import type { Pool } from 'pg';
import type { CallAssertionVerifier } from '@gatehouse/sdk';
import { GatehouseMetrics } from '@gatehouse/telemetry';
import type { Logger } from '@gatehouse/telemetry';
import { checkSchemaName } from './config.js';
import { registerHealthRoutes } from './health-routes.js';
import { registerCallCheck, registerErrorHandling } from './http-context.js';
import type { RefundsApp } from './http-context.js';
import { registerOperationRoutes } from './operation-routes.js';
import { registerOrderRoutes } from './order-routes.js';
import { registerRefundRoutes } from './refund-routes.js';
import { createServices } from './services.js';

export interface BuildAppOptions {
  readonly pool: Pool;
  readonly logger: Logger;
  /** PostgreSQL schema holding the tables (already migrated). */
  readonly schema: string;
  /** Checks the call assertion every request but health and metrics must carry. */
  readonly assertions: CallAssertionVerifier;
  /** This instance's metrics, served at GET /metrics; default a fresh registry. */
  readonly metrics?: GatehouseMetrics;
}

/** The refunds HTTP service, not yet listening; the pool stays the caller's to end. */
export function buildApp(options: BuildAppOptions): RefundsApp {
  const schema = checkSchemaName(options.schema);
  const app = fastify({
    loggerInstance: options.logger,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false } },
    return503OnClosing: true,
  });
  const services = createServices(options.pool, schema);
  const metrics = options.metrics ?? new GatehouseMetrics();
  registerErrorHandling(app);
  registerCallCheck(app, options.assertions, metrics);
  registerHealthRoutes(app, services);
  app.get('/metrics', { config: { tenantless: true } }, async (_request, reply) =>
    reply.type(metrics.contentType).send(await metrics.scrape()),
  );
  registerOrderRoutes(app, services);
  registerRefundRoutes(app, services);
  registerOperationRoutes(app, services);
  return app;
}
