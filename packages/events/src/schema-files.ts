import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SCHEMA_FILE_BY_ROLE, TOPIC_ROLES } from './topics.js';
import type { TopicRole } from './topics.js';

/** The Avro sources, read from this package's `schemas/` (or GATEHOUSE_SCHEMAS_DIR): they travel with it when it is packed. */
export function defaultSchemasDir(): string {
  const fromEnv = process.env['GATEHOUSE_SCHEMAS_DIR'];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  return fileURLToPath(new URL('../schemas/', import.meta.url));
}

export type EventSchemas = Readonly<Record<TopicRole, object>>;

/** Loads every event schema once, at start-up. */
export function loadEventSchemas(dir: string = defaultSchemasDir()): EventSchemas {
  const schemas = {} as Record<TopicRole, object>;
  for (const role of TOPIC_ROLES) {
    schemas[role] = JSON.parse(readFileSync(join(dir, SCHEMA_FILE_BY_ROLE[role]), 'utf8')) as object;
  }
  return schemas;
}
