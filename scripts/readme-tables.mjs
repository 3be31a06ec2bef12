// Rewrites the generated tables of the docs pages that hold them (between <!-- name:start --> and
// <!-- name:end -->): the error codes in docs/errors.md, the environment variables in
// docs/configuration.md. `--check` exits 1 when a page is out of date instead of writing it.
import { readFileSync, writeFileSync } from 'node:fs';
import { errorCodeTableMarkdown, surfaceTableMarkdown } from '@gatehouse/contracts';
import { configTableMarkdown } from '@gatehouse/runtime';

const pages = {
  'docs/errors.md': {
    'error-codes': errorCodeTableMarkdown(),
    'api-error-codes': surfaceTableMarkdown('api'),
    'identity-refusals': surfaceTableMarkdown('identity'),
    'assertion-refusals': surfaceTableMarkdown('assertion'),
    'process-errors': surfaceTableMarkdown('process'),
    'cli-errors': surfaceTableMarkdown('cli'),
  },
  'docs/configuration.md': { configuration: configTableMarkdown() },
};

let stale = false;
for (const [page, tables] of Object.entries(pages)) {
  const path = new URL(`../${page}`, import.meta.url);
  const before = readFileSync(path, 'utf8');
  let text = before;
  for (const [name, table] of Object.entries(tables)) {
    const pattern = new RegExp(`(<!-- ${name}:start -->\\n)[\\s\\S]*?(<!-- ${name}:end -->)`);
    if (!pattern.test(text)) throw new Error(`${page} has no ${name} markers`);
    text = text.replace(pattern, `$1${table.trimEnd()}\n$2`);
  }
  if (text === before) continue;
  if (process.argv.includes('--check')) {
    process.stderr.write(`${page} is out of date: run node scripts/readme-tables.mjs\n`);
    stale = true;
  } else writeFileSync(path, text);
}
process.exit(stale ? 1 : 0);
