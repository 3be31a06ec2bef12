// Rewrites the generated tables of README.md (between <!-- name:start --> and <!-- name:end -->).
// `--check` exits 1 when the README is out of date instead of writing it.
import { readFileSync, writeFileSync } from 'node:fs';
import { apiErrorCodeTableMarkdown, errorCodeTableMarkdown } from '@gatehouse/contracts';
import { configTableMarkdown } from '@gatehouse/runtime';

const path = new URL('../README.md', import.meta.url);
const tables = {
  'error-codes': errorCodeTableMarkdown(),
  'api-error-codes': apiErrorCodeTableMarkdown(),
  configuration: configTableMarkdown(),
};

let readme = readFileSync(path, 'utf8');
for (const [name, table] of Object.entries(tables)) {
  const pattern = new RegExp(`(<!-- ${name}:start -->\\n)[\\s\\S]*?(<!-- ${name}:end -->)`);
  if (!pattern.test(readme)) throw new Error(`README.md has no ${name} markers`);
  readme = readme.replace(pattern, `$1${table.trimEnd()}\n$2`);
}
if (process.argv.includes('--check')) {
  process.exit(readFileSync(path, 'utf8') === readme ? 0 : 1);
}
writeFileSync(path, readme);
