import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_ERROR_CODE_LIST, ApiErrorCode, apiErrorCodeTableMarkdown, ERROR_CODE_LIST } from '@gatehouse/contracts';

const repo = new URL('../../../', import.meta.url).pathname;
const readme = readFileSync(join(repo, 'docs/errors.md'), 'utf8');

/** The HTTP APIs' own codes, in catalogue order: append only, never renamed or reused. */
const PINNED = [
  'INVALID_REQUEST',
  'INTERNAL',
  'RUN_EXISTS',
  'UNKNOWN_ROLE',
  'TTL_TOO_LONG',
  'CAPABILITY_OUTSIDE_ROLE',
  'UNKNOWN_ISSUER',
  'SUBJECT_TOKEN_REFUSED',
  'SUBJECT_MISMATCH',
  'NOT_PENDING',
  'NOT_UNKNOWN',
  'OUTCOME_ALREADY_KNOWN',
  'STORE_UNCONFIRMED',
  'PROPOSAL_MISMATCH',
  'REQUEST_UNVERIFIED',
];

/** The identity refusals (@gatehouse/identity's IDENTITY_REFUSALS), read from their source: contracts depends on nothing. */
const identityCodes = (): Set<string> => {
  const source = readFileSync(join(repo, 'packages/identity/src/refusals.ts'), 'utf8');
  const block = /export const IDENTITY_REFUSALS = \{([\s\S]*?)\n\} as const/.exec(source)?.[1] ?? '';
  return new Set([...block.matchAll(/^\s+([A-Z_]+): \{\s+status/gm)].map((m) => m[1] ?? ''));
};

/** The files that answer HTTP requests: every service's sources and the ops server. */
const httpSources = (): string[] => {
  const files = readdirSync(join(repo, 'services')).flatMap((service) =>
    readdirSync(join(repo, 'services', service, 'src'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join(repo, 'services', service, 'src', f)),
  );
  return [...files, join(repo, 'packages/runtime/src/ops-server.ts')];
};

describe("the HTTP APIs' error codes", () => {
  it('holds exactly the pinned codes in catalogue order, none shared with the tool codes', () => {
    expect(API_ERROR_CODE_LIST).toEqual(PINNED);
    expect(Object.keys(ApiErrorCode)).toEqual(PINNED);
    for (const code of PINNED) expect(ERROR_CODE_LIST as readonly string[]).not.toContain(code);
    for (const code of PINNED) expect(ApiErrorCode[code as keyof typeof ApiErrorCode].meaning).toMatch(/\.$/);
  });

  it('is in docs/errors.md exactly as generated (run node scripts/readme-tables.mjs)', () => {
    const block = /<!-- api-error-codes:start -->\n([\s\S]*?)<!-- api-error-codes:end -->/.exec(readme)?.[1];
    expect(block?.trimEnd()).toBe(apiErrorCodeTableMarkdown().trimEnd());
  });

  it('covers every code the services answer: each is an API code, a tool code or an identity refusal', () => {
    const known = new Set<string>([...PINNED, ...ERROR_CODE_LIST, ...identityCodes()]);
    expect(known.has('UNAUTHORIZED')).toBe(true);
    const unknown: string[] = [];
    for (const file of httpSources()) {
      const source = readFileSync(file, 'utf8');
      for (const match of source.matchAll(/\bcode: '([A-Z][A-Z_]+)'|errorBody\('([A-Z][A-Z_]+)'/g)) {
        const code = match[1] ?? match[2] ?? '';
        if (!known.has(code)) unknown.push(`${file.slice(repo.length)}: ${code}`);
      }
    }
    expect(unknown).toEqual([]);
  });
});
