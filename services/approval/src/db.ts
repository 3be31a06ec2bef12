import pg from 'pg';
import { checkSchemaName } from './config.js';

/** Fully qualified, quoted names of the service's tables in one schema. */
export interface Tables {
  readonly schema: string;
  readonly migrations: string;
  readonly requests: string;
  readonly webhooks: string;
}

export function tablesIn(schema: string): Tables {
  const s = pg.escapeIdentifier(checkSchemaName(schema));
  return { schema: s, migrations: `${s}.schema_migrations`, requests: `${s}.approval_requests`, webhooks: `${s}.webhook_deliveries` };
}

export { ensureDatabase } from '@gatehouse/pg';
