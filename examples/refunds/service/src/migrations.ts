import type { Pool } from 'pg';
import { applyMigrations, seenAssertionsTableSql } from '@gatehouse/pg';
import type { Migration } from '@gatehouse/pg';
import { tablesIn } from './db.js';
import type { Tables } from './db.js';
import { REFUND_REASONS } from './refund-reasons.js';

const reasons = REFUND_REASONS.map((r) => `'${r}'`).join(', ');

/** Append-only: never edit or reorder an applied migration, add a new one. */
const MIGRATIONS: readonly Migration<Tables>[] = [
  {
    version: 1,
    name: 'orders, refunds and idempotency keys',
    sql: (t) => `
      CREATE TABLE ${t.orders} (
        order_id          text PRIMARY KEY,
        tenant            text NOT NULL,
        customer_ref      text NOT NULL,
        currency          char(3) NOT NULL,
        total_minor       bigint NOT NULL CHECK (total_minor >= 0),
        refunded_minor    bigint NOT NULL DEFAULT 0 CHECK (refunded_minor >= 0 AND refunded_minor <= total_minor),
        version           integer NOT NULL CHECK (version >= 1),
        payment_reference text NOT NULL,
        placed_at         timestamptz NOT NULL,
        updated_at        timestamptz NOT NULL
      );
      CREATE INDEX ON ${t.orders} (tenant, order_id);
      CREATE TABLE ${t.refunds} (
        refund_id       text PRIMARY KEY,
        tenant          text NOT NULL,
        order_id        text NOT NULL REFERENCES ${t.orders} (order_id),
        amount_minor    bigint NOT NULL CHECK (amount_minor > 0),
        currency        char(3) NOT NULL,
        reason          text NOT NULL CHECK (reason IN (${reasons})),
        order_version   integer NOT NULL,
        idempotency_key text NOT NULL UNIQUE,
        refunded_at     timestamptz NOT NULL
      );
      CREATE INDEX ON ${t.refunds} (order_id, refunded_at DESC);
      CREATE TABLE ${t.idempotencyKeys} (
        key              text PRIMARY KEY,
        tenant           text NOT NULL,
        operation        text NOT NULL,
        target_id        text NOT NULL,
        arguments_sha256 char(64) NOT NULL,
        status           text NOT NULL CHECK (status IN ('in_flight', 'succeeded', 'failed')),
        http_status      integer,
        response         jsonb,
        created_at       timestamptz NOT NULL DEFAULT now(),
        completed_at     timestamptz
      );
    `,
  },
  {
    version: 2,
    name: 'call assertion ids presented: the replay memory replicas share',
    sql: (t) => seenAssertionsTableSql(t.seenAssertions),
  },
];

/** The highest migration version this build knows. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Creates `schema` if missing and applies the migrations it lacks; instances starting together
 * apply each migration once. Returns the versions applied by this call.
 */
export function migrate(pool: Pool, schema: string): Promise<number[]> {
  return applyMigrations(pool, tablesIn(schema), `gatehouse-refunds-migrations:${schema}`, MIGRATIONS);
}
