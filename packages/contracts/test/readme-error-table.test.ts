import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODE_LIST, errorCodeTableMarkdown } from '@gatehouse/contracts';

const readme = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');

describe('the error table of docs/errors.md', () => {
  it('is exactly the table generated from the catalogue (run node scripts/readme-tables.mjs)', () => {
    const block = /<!-- error-codes:start -->\n([\s\S]*?)<!-- error-codes:end -->/.exec(readme)?.[1];
    expect(block?.trimEnd()).toBe(errorCodeTableMarkdown().trimEnd());
  });

  it('documents every code of the catalogue', () => {
    for (const code of ERROR_CODE_LIST) expect(readme).toContain(`| \`${code}\` |`);
  });
});
