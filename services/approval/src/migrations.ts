import type { Pool } from 'pg';
import { applyMigrations } from '@gatehouse/pg';
import type { Migration } from '@gatehouse/pg';
import { tablesIn } from './db.js';
import type { Tables } from './db.js';

/** Append-only: never edit or reorder an applied migration, add a new one. */
const MIGRATIONS: readonly Migration<Tables>[] = [
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
  {
    version: 3,
    name: 'the person who decided, as the identity provider names them',
    // {issuer, subject, name, auth_time}: decided_by stays the name people read.
    sql: (t) => `ALTER TABLE ${t.requests} ADD COLUMN decider jsonb`,
  },
  {
    version: 4,
    name: 'webhook notifications to approvers, an outbox',
    sql: (t) => `
      CREATE TABLE ${t.webhooks} (
        delivery_id      text NOT NULL,
        endpoint_id      text NOT NULL,
        event_type       text NOT NULL,
        body             text NOT NULL,
        state            text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dead')),
        attempts         integer NOT NULL DEFAULT 0,
        next_attempt_at  timestamptz NOT NULL DEFAULT now(),
        last_error       text,
        created_at       timestamptz NOT NULL DEFAULT now(),
        delivered_at     timestamptz,
        PRIMARY KEY (delivery_id, endpoint_id)
      );
      CREATE INDEX ON ${t.webhooks} (next_attempt_at) WHERE state = 'pending';
    `,
  },
  {
    version: 5,
    name: "the policy service's signature kept with each request, and the approval service's seal on each approval",
    // A row without them is never approved or published as approved: rows pending across this
    // migration must be proposed again.
    sql: (t) => `ALTER TABLE ${t.requests} ADD COLUMN request_proof jsonb, ADD COLUMN decision_seal jsonb`,
  },
];

/** The highest migration version this build knows. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Creates `schema` if missing and applies the migrations it lacks; instances starting together
 * apply each migration once. Returns the versions applied by this call.
 */
export function migrate(pool: Pool, schema: string): Promise<number[]> {
  return applyMigrations(pool, tablesIn(schema), `gatehouse-approval-migrations:${schema}`, MIGRATIONS);
}
