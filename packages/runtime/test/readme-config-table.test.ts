import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configTableMarkdown, VARIABLE_NAMES } from '@gatehouse/runtime';

const readme = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');

describe('the configuration table of docs/configuration.md', () => {
  it('is exactly the table generated from the schema (run node scripts/readme-tables.mjs)', () => {
    const block = /<!-- configuration:start -->\n([\s\S]*?)<!-- configuration:end -->/.exec(readme)?.[1];
    expect(block?.trimEnd()).toBe(configTableMarkdown().trimEnd());
  });

  it('documents every variable of the schema', () => {
    for (const name of VARIABLE_NAMES) expect(readme).toContain(`| \`${name}\` |`);
  });
});
