import pg from 'pg';
import type { Pool } from 'pg';
import { ensureDatabase, PgReplayGuard } from '@gatehouse/pg';
import { CallAssertionVerifier } from '@gatehouse/sdk';
import { createLogger } from '@gatehouse/telemetry';
import type { Logger } from '@gatehouse/telemetry';
import { buildApp } from './app.js';
import type { RefundsConfig } from './config.js';
import { tablesIn } from './db.js';
import type { Tables } from './db.js';
import { migrate } from './migrations.js';
import { seedIfEmpty } from './seed.js';

export interface RefundsServiceOptions extends RefundsConfig {
  /** Default: a `refunds` logger at LOG_LEVEL. */
  readonly logger?: Logger;
}

export interface RunningRefundsService {
  /** Base URL, e.g. `http://127.0.0.1:8094`. */
  readonly url: string;
  /** The service's pool: for asserting on rows. Ended by `stop`. */
  readonly db: Pool;
  /** The quoted names of the service's tables in its schema. */
  readonly tables: Tables;
  /** Stops accepting requests, waits for those in flight, ends the pool; once, however often it is called. */
  stop(): Promise<void>;
}

/** Creates the database if missing, migrates the schema, seeds it if empty, and listens. */
export async function startRefundsService(options: RefundsServiceOptions): Promise<RunningRefundsService> {
  const logger = options.logger ?? createLogger('refunds');
  await ensureDatabase(options.databaseUrl);
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });
  pool.on('error', (error) => logger.error({ err: error }, 'idle PostgreSQL client failed'));
  // Every replica over this schema shares one replay memory: an assertion is served once.
  const replay = new PgReplayGuard(pool, tablesIn(options.schema).seenAssertions);
  const app = buildApp({ pool, logger, schema: options.schema, assertions: new CallAssertionVerifier({ ...options.assertions, replay }) });
  try {
    const applied = await migrate(pool, options.schema);
    const seeded = await seedIfEmpty(pool, options.schema);
    logger.info({ schema: options.schema, migrations_applied: applied, seeded }, 'database ready');
    await app.listen({ host: options.host, port: options.port });
  } catch (error) {
    await app.close().catch(() => undefined);
    await pool.end();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  let stopped: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    db: pool,
    tables: tablesIn(options.schema),
    stop: () => {
      stopped ??= (async () => {
        try {
          await app.close();
        } finally {
          await pool.end();
        }
      })();
      return stopped;
    },
  };
}
