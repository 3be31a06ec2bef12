import type { Pool } from 'pg';
import { applyMigrations, seenAssertionsTableSql } from '@gatehouse/pg';
import type { Migration } from '@gatehouse/pg';
import { tablesIn } from './db.js';
import type { Tables } from './db.js';

/** Append-only: never edit or reorder an applied migration, add a new one. */
const MIGRATIONS: readonly Migration<Tables>[] = [
  {
    version: 1,
    name: 'customers, addresses and orders',
    sql: (t) => `
      CREATE TABLE ${t.customers} (
        id             text PRIMARY KEY,
        tenant         text NOT NULL,
        name           text NOT NULL,
        email          text NOT NULL,
        phone          text NOT NULL,
        line1          text NOT NULL,
        city           text NOT NULL,
        country        char(2) NOT NULL,
        postal_code    text,
        version        integer NOT NULL CHECK (version >= 1),
        updated_at     timestamptz NOT NULL,
        internal_notes text NOT NULL,
        credit_score   integer NOT NULL
      );
      CREATE INDEX ON ${t.customers} (tenant, id);
      CREATE TABLE ${t.savedAddresses} (
        address_id  text PRIMARY KEY,
        customer_id text NOT NULL REFERENCES ${t.customers} (id),
        position    integer NOT NULL,
        line1       text NOT NULL,
        city        text NOT NULL,
        country     char(2) NOT NULL,
        postal_code text,
        UNIQUE (customer_id, position)
      );
      CREATE TABLE ${t.orders} (
        order_id    text PRIMARY KEY,
        tenant      text NOT NULL,
        customer_id text NOT NULL REFERENCES ${t.customers} (id),
        state       text NOT NULL CHECK (state IN ('open', 'shipped', 'cancelled')),
        total_minor bigint NOT NULL CHECK (total_minor >= 0),
        currency    char(3) NOT NULL,
        placed_at   timestamptz NOT NULL
      );
      CREATE INDEX ON ${t.orders} (customer_id, state, placed_at DESC, order_id DESC);
    `,
  },
  {
    version: 2,
    name: 'idempotency keys, outbound messages, export jobs',
    sql: (t) => `
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
      CREATE TABLE ${t.outboundMessages} (
        id              text PRIMARY KEY,
        tenant          text NOT NULL,
        customer_id     text NOT NULL REFERENCES ${t.customers} (id),
        recipient       text NOT NULL,
        subject         text NOT NULL,
        body            text NOT NULL,
        template        text,
        sent_at         timestamptz NOT NULL,
        idempotency_key text NOT NULL UNIQUE
      );
      CREATE TABLE ${t.exportJobs} (
        id              text PRIMARY KEY,
        tenant          text NOT NULL,
        customer_id     text NOT NULL REFERENCES ${t.customers} (id),
        format          text NOT NULL CHECK (format IN ('csv', 'json')),
        state           text NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
        progress        integer NOT NULL CHECK (progress BETWEEN 0 AND 100),
        interruptible   boolean NOT NULL,
        created_at      timestamptz NOT NULL,
        updated_at      timestamptz NOT NULL,
        started_at      timestamptz,
        finished_at     timestamptz,
        result_url      text,
        idempotency_key text NOT NULL UNIQUE
      );
      CREATE INDEX ON ${t.exportJobs} (state) WHERE state IN ('queued', 'running');
    `,
  },
  {
    version: 3,
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
  return applyMigrations(pool, tablesIn(schema), `gatehouse-customers-migrations:${schema}`, MIGRATIONS);
}
