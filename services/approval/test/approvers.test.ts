import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { Approvers, tokenSha256 } from '@gatehouse/approval';

// The reference pack's demo approvers, which this service's README lists.
const DEFAULT_APPROVERS_FILE = fileURLToPath(new URL('../../../examples/customer-support/pack/config/approvers.json', import.meta.url));

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** The demo table of the README: identity → plain token. */
function demoTokens(): Map<string, string> {
  const section = README.slice(README.indexOf('### Demo approvers (not for production)'));
  const rows = [...section.matchAll(/^\| `([^`]+)` \|.*\| `([^`]+)` \|$/gm)];
  return new Map(rows.map((row) => [row[1] ?? '', row[2] ?? '']));
}

const entry = (identity: string, token: string, roles: string[] = ['support-lead']) => ({
  identity,
  token_sha256: tokenSha256(token),
  roles,
  tenants: ['acme'],
});

describe('approvers', () => {
  it('loads config/approvers.json, whose every entry is a labelled demo approver', () => {
    const approvers = Approvers.load(DEFAULT_APPROVERS_FILE);
    const list = approvers.list();
    expect(list.map((a) => a.identity).sort()).toEqual(['demo-lead@acme.example', 'demo-ops@acme.example', 'demo-viewer@acme.example']);
    expect(list.every((a) => a.demo)).toBe(true);
    expect(list.find((a) => a.identity === 'demo-viewer@acme.example')?.roles).toEqual([]);
  });

  it('authenticates each demo token published in the README as its identity, and nothing else', () => {
    const approvers = Approvers.load(DEFAULT_APPROVERS_FILE);
    const tokens = demoTokens();
    expect(tokens.size).toBe(3);
    for (const [identity, token] of tokens) {
      expect(approvers.authenticate(token)?.identity).toBe(identity);
      expect(approvers.fromAuthorization(`Bearer ${token}`)?.identity).toBe(identity);
      expect(approvers.authenticate(`${token}x`)).toBeUndefined();
    }
    expect(readFileSync(DEFAULT_APPROVERS_FILE, 'utf8')).not.toContain([...tokens.values()][0]);
  });

  it('refuses a header that is not a bearer token', () => {
    const approvers = Approvers.parse({ approvers: [entry('a@x.example', 'secret-a')] });
    expect(approvers.fromAuthorization('secret-a')).toBeUndefined();
    expect(approvers.fromAuthorization('Basic secret-a')).toBeUndefined();
    expect(approvers.fromAuthorization(undefined)).toBeUndefined();
    expect(approvers.authenticate('')).toBeUndefined();
  });

  it('refuses a file that stores a plain token instead of its hash', () => {
    expect(() => Approvers.parse({ approvers: [{ identity: 'a@x.example', token: 'secret', roles: [], tenants: ['acme'] }] })).toThrow(
      /approvers file is invalid/,
    );
  });

  it('refuses duplicate identities and shared tokens', () => {
    expect(() => Approvers.parse({ approvers: [entry('a@x.example', 'one'), entry('a@x.example', 'two')] })).toThrow(/listed twice/);
    expect(() => Approvers.parse({ approvers: [entry('a@x.example', 'one'), entry('b@x.example', 'one')] })).toThrow(/shares a token/);
  });

  it('refuses an approver with no tenant', () => {
    expect(() => Approvers.parse({ approvers: [{ ...entry('a@x.example', 'one'), tenants: [] }] })).toThrow(/tenants/);
  });
});
