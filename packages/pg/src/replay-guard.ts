import type { Pool } from 'pg';

/**
 * How long past its expiry a remembered id is kept before it is deleted: replicas whose clocks run
 * ahead must not forget an id while one whose clock runs behind still accepts its assertion.
 */
const FORGET_AFTER_MS = 60_000;

/** How many forgotten ids each insert deletes at most: more than one, so deletion keeps up with inserts. */
const DELETE_PER_INSERT = 8;

/**
 * The SQL of a table that remembers call assertions' ids, for a service's migration: `table` is
 * its quoted, schema-qualified name (`"customers".seen_assertions`). Migrations apply it: never
 * change it, add a migration that alters the table.
 */
export function seenAssertionsTableSql(table: string): string {
  return `
    CREATE TABLE ${table} (
      jti        text PRIMARY KEY,
      expires_at timestamptz NOT NULL
    );
    CREATE INDEX ON ${table} (expires_at);
  `;
}

/**
 * The replay memory of a system of record's replicas, shared in PostgreSQL: one row per call
 * assertion id presented, inserted once (`ON CONFLICT DO NOTHING`), so however many replicas
 * verify, an assertion is accepted once. It implements `ReplayGuard` of `@gatehouse/sdk`: give it
 * to `CallAssertionVerifier` as `replay`. Each insert also deletes a few ids expired a minute ago,
 * in the same statement, so the table holds the ids of the last few minutes and no timer is needed.
 * A database that cannot be reached rejects: the verifier serves nothing it could not check.
 */
export class PgReplayGuard {
  readonly #sql: string;

  /** `table` is the quoted, schema-qualified name of a table made by `seenAssertionsTableSql`. */
  constructor(
    private readonly pool: Pool,
    table: string,
  ) {
    this.#sql = `
      WITH forgotten AS (
        DELETE FROM ${table} WHERE jti IN (
          SELECT jti FROM ${table} WHERE expires_at < to_timestamp($3::double precision / 1000)
          ORDER BY expires_at LIMIT ${DELETE_PER_INSERT} FOR UPDATE SKIP LOCKED
        )
      )
      INSERT INTO ${table} (jti, expires_at) VALUES ($1, to_timestamp($2::double precision / 1000))
      ON CONFLICT (jti) DO NOTHING`;
  }

  /** True the first time `jti` is presented to any replica sharing the table, false after. */
  async firstSeen(jti: string, expiresAtMs: number, now: number = Date.now()): Promise<boolean> {
    const inserted = await this.pool.query(this.#sql, [jti, expiresAtMs, now - FORGET_AFTER_MS]);
    return inserted.rowCount === 1;
  }
}
