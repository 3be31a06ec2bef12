import type { PoolClient } from 'pg';
import type { Tables } from './db.js';
import type { Queryable } from './order-repository.js';

export type KeyStatus = 'in_flight' | 'succeeded' | 'failed';

export const OPERATIONS = { refund: 'refund' } as const;
export type Operation = (typeof OPERATIONS)[keyof typeof OPERATIONS];

/** What a key is claimed for: a replay must match all of it. */
export interface KeyClaim {
  readonly key: string;
  readonly tenant: string;
  readonly operation: Operation;
  readonly targetId: string;
  readonly argumentsSha256: string;
}

export interface KeyRecord extends KeyClaim {
  readonly status: KeyStatus;
  readonly httpStatus: number | null;
  readonly response: unknown;
}

interface KeyRow {
  key: string;
  tenant: string;
  operation: Operation;
  target_id: string;
  arguments_sha256: string;
  status: KeyStatus;
  http_status: number | null;
  response: unknown;
}

export class IdempotencyRepository {
  constructor(private readonly t: Tables) {}

  /**
   * Inserts the key as in flight; false if it exists. When another open transaction inserted the
   * same key, PostgreSQL makes this wait for it to commit or roll back, so one key applies once.
   */
  async claim(db: PoolClient, claim: KeyClaim): Promise<boolean> {
    const inserted = await db.query(
      `INSERT INTO ${this.t.idempotencyKeys} (key, tenant, operation, target_id, arguments_sha256, status)
       VALUES ($1, $2, $3, $4, $5, 'in_flight') ON CONFLICT (key) DO NOTHING`,
      [claim.key, claim.tenant, claim.operation, claim.targetId, claim.argumentsSha256],
    );
    return inserted.rowCount === 1;
  }

  async complete(
    db: PoolClient,
    key: string,
    status: Exclude<KeyStatus, 'in_flight'>,
    httpStatus: number,
    response: unknown,
  ): Promise<void> {
    await db.query(
      `UPDATE ${this.t.idempotencyKeys} SET status = $2, http_status = $3, response = $4::jsonb, completed_at = now() WHERE key = $1`,
      [key, status, httpStatus, JSON.stringify(response)],
    );
  }

  async find(db: Queryable, key: string): Promise<KeyRecord | undefined> {
    const found = await db.query<KeyRow>(`SELECT * FROM ${this.t.idempotencyKeys} WHERE key = $1`, [key]);
    const row = found.rows[0];
    if (row === undefined) return undefined;
    return {
      key: row.key,
      tenant: row.tenant,
      operation: row.operation,
      targetId: row.target_id,
      argumentsSha256: row.arguments_sha256,
      status: row.status,
      httpStatus: row.http_status,
      response: row.response,
    };
  }
}
