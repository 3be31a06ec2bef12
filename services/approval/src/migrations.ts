import type { Pool } from 'pg';
import { tablesIn, withTransaction } from './db.js';
import type { Tables } from './db.js';

interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: (t: Tables) => string;
}

/** Append-only: never edit or reorder an applied migration, add a new one. */
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'approval requests and their decisions',
    sql: (t) => `
      CREATE TABLE ${t.requests} (
        proposal_id          text PRIMARY KEY,
        tenant               text NOT NULL,
        run_id               text NOT NULL,
        principal            text NOT NULL,
        tool                 text NOT NULL,
        approver_role        text NOT NULL,
        arguments_sha256     char(64) NOT NULL,
        request              jsonb NOT NULL,
        state                text NOT NULL CHECK (state IN ('pending', 'approved', 'rejected', 'expired')),
        command_id           text NOT NULL,
        command_ids          text[] NOT NULL,
        requested_at         timestamptz NOT NULL,
        expires_at           timestamptz NOT NULL,
        received_at          timestamptz NOT NULL DEFAULT now(),
        decision_id          text UNIQUE,
        decided_by           text,
        decided_at           timestamptz,
        reason               text CHECK (reason IS NULL OR char_length(reason) BETWEEN 1 AND 500),
        approver_roles       text[],
        approval_id          text UNIQUE,
        approval_expires_at  timestamptz,
        order_id             text UNIQUE,
        publish_claimed_at   timestamptz,
        published_at         timestamptz,
        CHECK ((state = 'pending') = (decision_id IS NULL)),
        CHECK ((state = 'approved') = (approval_id IS NOT NULL))
      );
      CREATE INDEX ON ${t.requests} (tenant, state, requested_at DESC);
      CREATE INDEX ON ${t.requests} (expires_at) WHERE state = 'pending';
      CREATE INDEX ON ${t.requests} (publish_claimed_at) WHERE state <> 'pending' AND published_at IS NULL;
    `,
  },
  {
    version: 2,
    name: 'trace context of the command a decision answers',
    // Kafka headers (traceparent, tracestate, gatehouse-sent-at) copied onto what the decision publishes.
    sql: (t) => `ALTER TABLE ${t.requests} ADD COLUMN carried_headers jsonb`,
  },
];

/** The highest migration version this build knows. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Creates `schema` if missing and applies the migrations it lacks, in one transaction under an
 * advisory lock on the schema name, so instances starting together apply each migration once.
 * Returns the versions applied by this call.
 */
export async function migrate(pool: Pool, schema: string): Promise<number[]> {
  const t = tablesIn(schema);
  return withTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`gatehouse-approval-migrations:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${t.schema}`);
    await client.query(`
      CREATE TABLE IF NOT EXISTS ${t.migrations} (
        version    integer PRIMARY KEY,
        name       text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
    const done = await client.query<{ version: number }>(`SELECT version FROM ${t.migrations}`);
    const applied = new Set(done.rows.map((row) => row.version));
    const now: number[] = [];
    for (const migration of MIGRATIONS) {
      if (applied.has(migration.version)) continue;
      await client.query(migration.sql(t));
      await client.query(`INSERT INTO ${t.migrations} (version, name) VALUES ($1, $2)`, [migration.version, migration.name]);
      now.push(migration.version);
    }
    return now;
  });
}
