import pg from 'pg';
import { checkSchemaName } from './config.js';

/** Fully qualified, quoted names of the service's tables in one schema. */
export interface Tables {
  readonly schema: string;
  readonly migrations: string;
  readonly orders: string;
  readonly refunds: string;
  readonly idempotencyKeys: string;
  /** The call assertions' ids presented to any replica: the replay memory they share. */
  readonly seenAssertions: string;
}

export function tablesIn(schema: string): Tables {
  const s = pg.escapeIdentifier(checkSchemaName(schema));
  return {
    schema: s,
    migrations: `${s}.schema_migrations`,
    orders: `${s}.orders`,
    refunds: `${s}.refunds`,
    idempotencyKeys: `${s}.idempotency_keys`,
    seenAssertions: `${s}.seen_assertions`,
  };
}
