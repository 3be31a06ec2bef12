import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SCHEMA_FILE_BY_ROLE, TOPIC_ROLES } from './topics.js';
import type { TopicRole } from './topics.js';

/**
 * The Avro sources of the wire contract: GATEHOUSE_SCHEMAS_DIR when set, else the copy a packed
 * package carries in its own `schemas/` (scripts/pack-package.mjs puts it there), else the
 * repository's (or image's) top-level `schemas/`, two folders above this package.
 */
export function defaultSchemasDir(): string {
  const fromEnv = process.env['GATEHOUSE_SCHEMAS_DIR'];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  const packed = fileURLToPath(new URL('../schemas/', import.meta.url));
  return existsSync(packed) ? packed : fileURLToPath(new URL('../../../schemas/', import.meta.url));
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
