import pg from 'pg';
import type { Pool, PoolClient } from 'pg';

/** Runs `work` in one transaction (READ COMMITTED); commits on return, rolls back on throw. */
export async function withTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Creates the database named in `databaseUrl` if it is missing, tolerating a concurrent create. */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (name === '' || name === 'postgres') return;
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount !== 0) return;
    try {
      await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    } catch (error) {
      // 42P04 duplicate_database; 23505 when two creates race on pg_database's unique index.
      const code = (error as { code?: unknown }).code;
      if (code !== '42P04' && code !== '23505') throw error;
    }
  } finally {
    await admin.end();
  }
}

/** One step of a service's schema; append-only: never edit or reorder an applied one. */
export interface Migration<T> {
  readonly version: number;
  readonly name: string;
  readonly sql: (tables: T) => string;
}

/** The quoted names migrations need: the schema and its migrations table. */
export interface MigrationTables {
  readonly schema: string;
  readonly migrations: string;
}

/**
 * Creates the schema if missing and applies the migrations it lacks, in one transaction under an
 * advisory lock on `lockKey`, so instances starting together apply each migration once.
 * Returns the versions applied by this call.
 */
export async function applyMigrations<T extends MigrationTables>(
  pool: Pool,
  tables: T,
  lockKey: string,
  migrations: readonly Migration<T>[],
): Promise<number[]> {
  return withTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [lockKey]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${tables.schema}`);
    await client.query(`
      CREATE TABLE IF NOT EXISTS ${tables.migrations} (
        version    integer PRIMARY KEY,
        name       text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
    const done = await client.query<{ version: number }>(`SELECT version FROM ${tables.migrations}`);
    const applied = new Set(done.rows.map((row) => row.version));
    const now: number[] = [];
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await client.query(migration.sql(tables));
      await client.query(`INSERT INTO ${tables.migrations} (version, name) VALUES ($1, $2)`, [migration.version, migration.name]);
      now.push(migration.version);
    }
    return now;
  });
}

export { PgReplayGuard, seenAssertionsTableSql } from './replay-guard.js';
