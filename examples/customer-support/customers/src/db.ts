import pg from 'pg';
import { checkSchemaName } from './config.js';

/** Fully qualified, quoted names of the service's tables in one schema. */
export interface Tables {
  readonly schema: string;
  readonly migrations: string;
  readonly customers: string;
  readonly savedAddresses: string;
  readonly orders: string;
  readonly idempotencyKeys: string;
  readonly outboundMessages: string;
  readonly exportJobs: string;
  /** The call assertions' ids presented to any replica: the replay memory they share. */
  readonly seenAssertions: string;
}

export function tablesIn(schema: string): Tables {
  const s = pg.escapeIdentifier(checkSchemaName(schema));
  return {
    schema: s,
    migrations: `${s}.schema_migrations`,
    customers: `${s}.customers`,
    savedAddresses: `${s}.saved_addresses`,
    orders: `${s}.orders`,
    idempotencyKeys: `${s}.idempotency_keys`,
    outboundMessages: `${s}.outbound_messages`,
    exportJobs: `${s}.export_jobs`,
    seenAssertions: `${s}.seen_assertions`,
  };
}

export { ensureDatabase, withTransaction } from '@gatehouse/pg';
