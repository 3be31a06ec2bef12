import pg from 'pg';
import type { Pool } from 'pg';
import { PgReplayGuard } from '@gatehouse/pg';
import { CallAssertionVerifier } from '@gatehouse/sdk';
import type { Logger } from '@gatehouse/telemetry';
import { buildApp } from './app.js';
import type { CustomersConfig } from './config.js';
import { ensureDatabase, tablesIn } from './db.js';
import { migrate } from './migrations.js';
import { seedIfEmpty } from './seed.js';
import type { CustomersApp } from './http-context.js';

export interface RunningCustomersService {
  readonly app: CustomersApp;
  readonly pool: Pool;
  /** Base URL, e.g. `http://127.0.0.1:8090`. */
  readonly url: string;
  /** Stops accepting requests, waits for those in flight, stops the export worker, ends the pool. */
  readonly close: () => Promise<void>;
}

/** Creates the database if missing, migrates the schema, seeds it if empty, and listens. */
export async function startCustomersService(config: CustomersConfig, logger: Logger): Promise<RunningCustomersService> {
  await ensureDatabase(config.databaseUrl);
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 20 });
  pool.on('error', (error) => logger.error({ err: error }, 'idle PostgreSQL client failed'));
  let app: CustomersApp | undefined;
  try {
    const applied = await migrate(pool, config.schema);
    const seeded = await seedIfEmpty(pool, config.schema);
    logger.info({ schema: config.schema, migrations_applied: applied, seeded }, 'database ready');
    app = buildApp({
      pool,
      logger,
      schema: config.schema,
      exportStepMs: config.exportStepMs,
      faults: config.faultsEnabled,
      cursorSecret: config.cursorSecret,
      // Every replica over this schema shares one replay memory: an assertion is served once.
      assertions: new CallAssertionVerifier({
        ...config.assertions,
        replay: new PgReplayGuard(pool, tablesIn(config.schema).seenAssertions),
      }),
    });
    await app.listen({ host: config.host, port: config.port });
    const address = app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : config.port;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    const listening = app;
    return {
      app: listening,
      pool,
      url: `http://${host}:${port}`,
      close: async () => {
        try {
          await listening.close();
        } finally {
          await pool.end();
        }
      },
    };
  } catch (error) {
    await app?.close().catch(() => undefined);
    await pool.end();
    throw error;
  }
}
