// Writes examples/customer-support/pack/catalog.snapshot.json: what each role of examples/customer-support/pack/config/roles.json can
// call in the reference catalog (tool, effect, approval rule, retired). The contract tests pin that
// file, so a change to the catalog or the roles shows up as a reviewed diff. Run after a build:
//   node scripts/tsc.mjs -b && node scripts/catalog-snapshot.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { snapshotByRole, snapshotJson } from '@gatehouse/contracts';
import { loadRoles } from '@gatehouse/governance';
import { customerSupportCatalog } from '@gatehouse/example-customer-support';

const rolesFile = fileURLToPath(new URL('../examples/customer-support/pack/config/roles.json', import.meta.url));
const snapshotFile = fileURLToPath(new URL('../examples/customer-support/pack/catalog.snapshot.json', import.meta.url));

// The roles are checked as the policy service checks them at start-up: the schema, every tool in
// the catalog, no write under a read-only role.
const catalog = customerSupportCatalog();
const roles = (() => {
  try {
    return loadRoles(rolesFile, catalog);
  } catch (error) {
    throw new Error(`${rolesFile}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
})();
const toolLists = Object.fromEntries(Object.entries(roles).map(([name, role]) => [name, role.tools]));
const text = snapshotJson(snapshotByRole(catalog, toolLists));
const previous = (() => {
  try {
    return readFileSync(snapshotFile, 'utf8');
  } catch {
    return undefined;
  }
})();
writeFileSync(snapshotFile, text);
process.stdout.write(`${previous === text ? 'unchanged' : 'wrote'} ${snapshotFile}\n`);
