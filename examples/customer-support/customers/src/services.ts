import type { Pool, PoolClient } from 'pg';
import type { Logger } from '@gatehouse/telemetry';
import { AddressChanges } from './address-change.js';
import { CursorCodec } from './cursor.js';
import { CustomerRepository } from './customer-repository.js';
import { tablesIn } from './db.js';
import { ExportJobs } from './export-jobs.js';
import type { Faults } from './faults.js';
import { IdempotencyRepository } from './idempotency-repository.js';
import type { KeyClaim } from './idempotency-repository.js';
import { runIdempotentWrite } from './idempotent-write.js';
import type { WriteOutcome, WriteResult } from './idempotent-write.js';
import { MessageRepository } from './message-repository.js';
import { OrderRepository } from './order-repository.js';

/** Everything a route needs, built once per app. */
export interface Services {
  readonly pool: Pool;
  readonly logger: Logger;
  readonly faults: Faults;
  readonly customers: CustomerRepository;
  readonly orders: OrderRepository;
  readonly keys: IdempotencyRepository;
  readonly messages: MessageRepository;
  readonly exports: ExportJobs;
  readonly addressChanges: AddressChanges;
  readonly cursors: CursorCodec;
  /** Runs a keyed write in one transaction with its idempotency record (see runIdempotentWrite). */
  readonly runWrite: (claim: KeyClaim, work: (db: PoolClient) => Promise<WriteResult>) => Promise<WriteOutcome>;
}

export function createServices(pool: Pool, logger: Logger, schema: string, faults: Faults, cursorSecret: string): Services {
  const t = tablesIn(schema);
  const customers = new CustomerRepository(t);
  const keys = new IdempotencyRepository(t);
  return {
    pool,
    logger,
    faults,
    customers,
    orders: new OrderRepository(t),
    keys,
    messages: new MessageRepository(t),
    exports: new ExportJobs(t),
    addressChanges: new AddressChanges(customers),
    cursors: new CursorCodec(cursorSecret),
    runWrite: (claim, work) => runIdempotentWrite(pool, keys, claim, work),
  };
}
