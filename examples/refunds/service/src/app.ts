import { fastify } from 'fastify';
import type { Pool } from 'pg';
import type { Logger } from '@gatehouse/telemetry';
import { checkSchemaName } from './config.js';
import { registerHealthRoutes } from './health-routes.js';
import { registerErrorHandling, registerTenantCheck } from './http-context.js';
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
  registerErrorHandling(app);
  registerTenantCheck(app);
  registerHealthRoutes(app, services);
  registerOrderRoutes(app, services);
  registerRefundRoutes(app, services);
  registerOperationRoutes(app, services);
  return app;
}
