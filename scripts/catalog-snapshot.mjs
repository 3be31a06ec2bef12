// Writes packages/reference-tools/catalog.snapshot.json: what each role of config/roles.json can
// call in the reference catalog (tool, effect, approval rule, retired). The contract tests pin that
// file, so a change to the catalog or the roles shows up as a reviewed diff. Run after a build:
//   node scripts/tsc.mjs -b && node scripts/catalog-snapshot.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { snapshotByRole, snapshotJson } from '@gatehouse/contracts';
import { referenceCatalog } from '@gatehouse/reference-tools';

const rolesFile = fileURLToPath(new URL('../config/roles.json', import.meta.url));
const snapshotFile = fileURLToPath(new URL('../packages/reference-tools/catalog.snapshot.json', import.meta.url));

/** `{ role: [address, …] }` from the roles document; refuses anything that is not that shape. */
function toolListsOf(document) {
  const roles = document?.roles;
  if (typeof roles !== 'object' || roles === null || Array.isArray(roles)) throw new Error(`${rolesFile}: "roles" must be an object`);
  return Object.fromEntries(
    Object.entries(roles).map(([name, role]) => {
      const tools = role?.tools;
      if (!Array.isArray(tools) || !tools.every((t) => typeof t === 'string')) {
        throw new Error(`${rolesFile}: roles.${name}.tools must be an array of tool addresses`);
      }
      return [name, tools];
    }),
  );
}

const toolLists = toolListsOf(JSON.parse(readFileSync(rolesFile, 'utf8')));
const text = snapshotJson(snapshotByRole(referenceCatalog(), toolLists));
const previous = (() => {
  try {
    return readFileSync(snapshotFile, 'utf8');
  } catch {
    return undefined;
  }
})();
writeFileSync(snapshotFile, text);
process.stdout.write(`${previous === text ? 'unchanged' : 'wrote'} ${snapshotFile}\n`);
