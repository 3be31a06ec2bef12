import type { Pool, PoolClient } from 'pg';
import { tablesIn } from './db.js';
import { IdempotencyRepository } from './idempotency-repository.js';
import type { KeyClaim } from './idempotency-repository.js';
import { runIdempotentWrite } from './idempotent-write.js';
import type { WriteOutcome, WriteResult } from './idempotent-write.js';
import { OrderRepository } from './order-repository.js';

/** Everything a route needs, built once per app. */
export interface Services {
  readonly pool: Pool;
  readonly orders: OrderRepository;
  readonly keys: IdempotencyRepository;
  /** Runs a keyed write in one transaction with its idempotency record (see runIdempotentWrite). */
  readonly runWrite: (claim: KeyClaim, work: (db: PoolClient) => Promise<WriteResult>) => Promise<WriteOutcome>;
}

export function createServices(pool: Pool, schema: string): Services {
  const t = tablesIn(schema);
  const keys = new IdempotencyRepository(t);
  return {
    pool,
    orders: new OrderRepository(t),
    keys,
    runWrite: (claim, work) => runIdempotentWrite(pool, keys, claim, work),
  };
}
