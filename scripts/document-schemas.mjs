// node scripts/document-schemas.mjs [--check]: writes the JSON Schemas of the documents a tool pack
// ships (roles, policy table, approvers, approver policy) into packages/sdk/schemas/, from the very
// schemas the services validate them with (@gatehouse/governance, @gatehouse/identity). With --check, writes nothing and exits 1 when
// a published file differs. An editor validates a document that names its schema:
//   { "$schema": "../node_modules/@gatehouse/sdk/schemas/roles.schema.json", "roles": { … } }
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { APPROVERS_SCHEMA, POLICY_TABLE_SCHEMA, ROLES_SCHEMA } from '@gatehouse/governance';
import { APPROVER_POLICY_SCHEMA } from '@gatehouse/identity';

const OUT = resolve(dirname(fileURLToPath(import.meta.url)), '../packages/sdk/schemas');

export const DOCUMENT_SCHEMAS = {
  'roles.schema.json': {
    title: 'Gatehouse roles',
    description: 'The roles a run may be registered with, and the tool versions each grants. A read-only role never lists a write tool.',
    schema: ROLES_SCHEMA,
  },
  'policy-table.schema.json': {
    title: 'Gatehouse policy table',
    description:
      'Ordered rules: the first whose every match key holds decides (allow, require_approval or deny). A call no rule matches is denied.',
    schema: POLICY_TABLE_SCHEMA,
  },
  'approvers.schema.json': {
    title: 'Gatehouse approvers',
    description:
      'People who may decide on proposals, by the SHA-256 of their bearer token, with the approver roles they hold and at least one tenant each.',
    schema: APPROVERS_SCHEMA,
  },
  'approver-policy.schema.json': {
    title: 'Gatehouse approver policy',
    description:
      'Which claims at the identity provider make a person an approver: every grant whose claim holds its value adds its roles and tenants. No role or no tenant: the person cannot approve.',
    schema: APPROVER_POLICY_SCHEMA,
  },
};

/** A published file's text: the draft it follows, a title and a description, then the schema. */
export function documentSchemaText({ title, description, schema }) {
  return `${JSON.stringify({ $schema: 'https://json-schema.org/draft/2020-12/schema', title, description, ...schema }, null, 2)}\n`;
}

const check = process.argv.includes('--check');
const stale = [];
if (!check) mkdirSync(OUT, { recursive: true });
for (const [file, entry] of Object.entries(DOCUMENT_SCHEMAS)) {
  const path = join(OUT, file);
  const text = documentSchemaText(entry);
  if (check) {
    if (!existsSync(path) || readFileSync(path, 'utf8') !== text) stale.push(file);
  } else {
    writeFileSync(path, text);
  }
}
if (stale.length > 0) {
  process.stderr.write(
    `packages/sdk/schemas: ${stale.join(', ')} differ from the services' schemas; run node scripts/document-schemas.mjs\n`,
  );
  process.exit(1);
}
