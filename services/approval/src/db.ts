import pg from 'pg';
import type { Pool, PoolClient } from 'pg';
import { checkSchemaName } from './config.js';

/** Fully qualified, quoted names of the service's tables in one schema. */
export interface Tables {
  readonly schema: string;
  readonly migrations: string;
  readonly requests: string;
}

export function tablesIn(schema: string): Tables {
  const s = pg.escapeIdentifier(checkSchemaName(schema));
  return { schema: s, migrations: `${s}.schema_migrations`, requests: `${s}.approval_requests` };
}

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
