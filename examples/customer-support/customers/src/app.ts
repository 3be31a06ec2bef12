import { fastify } from 'fastify';
import type { Pool } from 'pg';
import type { CallAssertionVerifier } from '@gatehouse/sdk';
import { GatehouseMetrics } from '@gatehouse/telemetry';
import type { Logger } from '@gatehouse/telemetry';
import { CUSTOMERS_ENV_DEFAULTS, checkSchemaName } from './config.js';
import { registerCustomerRoutes } from './customer-routes.js';
import { registerExportRoutes } from './export-routes.js';
import { ExportWorker } from './export-worker.js';
import { Faults, registerFaultHooks, registerFaultRoutes } from './faults.js';
import { registerHealthRoutes } from './health-routes.js';
import { registerCallCheck, registerErrorHandling } from './http-context.js';
import { registerMetrics } from './metrics-routes.js';
import { registerOperationRoutes } from './operation-routes.js';
import { createServices } from './services.js';
import { registerWriteRoutes } from './write-routes.js';
import type { CustomersApp } from './http-context.js';

export interface BuildAppOptions {
  readonly pool: Pool;
  readonly logger: Logger;
  /** PostgreSQL schema holding the tables (already migrated). */
  readonly schema: string;
  /** Duration of each export phase; default EXPORT_STEP_MS's default (2000). */
  readonly exportStepMs?: number;
  /** Enables `x-fault`, `/__faults` and `/__stats`. Default false. */
  readonly faults?: boolean;
  readonly cursorSecret?: string;
  /** This instance's metrics, served at GET /metrics; default a fresh registry. */
  readonly metrics?: GatehouseMetrics;
  /** Checks the call assertion every request but health, metrics and faults must carry. */
  readonly assertions: CallAssertionVerifier;
}

/**
 * The customers HTTP service, not yet listening. The export worker runs between `ready` and
 * `close`; the pool stays the caller's to end.
 */
export function buildApp(options: BuildAppOptions): CustomersApp {
  const schema = checkSchemaName(options.schema);
  const app = fastify({
    loggerInstance: options.logger,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, discriminator: true } },
    return503OnClosing: true,
  });
  const faults = new Faults(options.faults ?? false);
  const services = createServices(
    options.pool,
    options.logger,
    schema,
    faults,
    options.cursorSecret ?? CUSTOMERS_ENV_DEFAULTS.CUSTOMERS_CURSOR_SECRET,
  );
  const worker = new ExportWorker(
    options.pool,
    services.exports,
    options.exportStepMs ?? Number(CUSTOMERS_ENV_DEFAULTS.EXPORT_STEP_MS),
    options.logger.child({ part: 'export-worker' }),
  );

  const metrics = options.metrics ?? new GatehouseMetrics();
  registerErrorHandling(app);
  registerCallCheck(app, options.assertions, metrics);
  registerFaultHooks(app, faults);
  registerHealthRoutes(app, services);
  registerMetrics(app, metrics);
  registerCustomerRoutes(app, services);
  registerWriteRoutes(app, services);
  registerOperationRoutes(app, services);
  registerExportRoutes(app, services);
  registerFaultRoutes(app, faults);

  app.addHook('onReady', (done) => {
    worker.start();
    done();
  });
  app.addHook('onClose', async () => worker.stop());
  return app;
}
