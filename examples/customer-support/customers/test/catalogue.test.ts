import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { argumentsSha256, CUSTOMERS_ENV_DEFAULTS, customersConfigFromEnv, ERROR_CATALOGUE } from '@gatehouse/customers';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

function tableRows(heading: string): string[][] {
  const section = readme.split(`## ${heading}`)[1]?.split('\n## ')[0] ?? '';
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
}

describe('the customers error catalogue', () => {
  it('holds exactly the codes callers branch on, none removed or renamed', () => {
    expect(Object.keys(ERROR_CATALOGUE)).toEqual([
      'INVALID_REQUEST',
      'NOT_FOUND',
      'VERSION_CONFLICT',
      'CONFLICT',
      'IDEMPOTENCY_KEY_REUSED',
      'UNAVAILABLE',
      'INTERNAL',
    ]);
  });

  it('is documented row for row in the README error table', () => {
    const documented = tableRows('Error codes').map(([code, status, retryable, meaning]) => [code, status, retryable, meaning]);
    const actual = Object.entries(ERROR_CATALOGUE).map(([code, e]) => [
      `\`${code}\``,
      String(e.httpStatus),
      String(e.retryable),
      e.meaning,
    ]);
    expect(documented).toEqual(actual);
  });
});

describe('the customers configuration', () => {
  it('documents every environment variable with its default in the README', () => {
    const documented = tableRows('Environment').map(([name, value]) => [name, value]);
    const withDefaults = Object.entries(CUSTOMERS_ENV_DEFAULTS).map(([name, value]) => [`\`${name}\``, `\`${value}\``]);
    expect(documented).toEqual([...withDefaults, ['`CUSTOMERS_ASSERTION_KEYS`', '*(required)*']]);
  });

  it("refuses to start without the executors' keys, since it could check no call", () => {
    expect(() => customersConfigFromEnv({})).toThrow(/CUSTOMERS_ASSERTION_KEYS is required/);
    expect(() => customersConfigFromEnv({ CUSTOMERS_ASSERTION_KEYS: '/nonexistent/jwks.json' })).toThrow(/not a readable JSON file/);
  });

  it("uses the documented defaults when only the executors' keys are given, with faults off", () => {
    expect(customersConfigFromEnv({ CUSTOMERS_ASSERTION_KEYS: 'http://127.0.0.1:8092/.well-known/jwks.json' })).toEqual({
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/gatehouse',
      host: '127.0.0.1',
      port: 8090,
      schema: 'customers',
      exportStepMs: 2000,
      faultsEnabled: false,
      cursorSecret: CUSTOMERS_ENV_DEFAULTS.CUSTOMERS_CURSOR_SECRET,
      assertions: { keys: 'http://127.0.0.1:8092/.well-known/jwks.json', issuer: 'urn:gatehouse', audience: 'customers' },
    });
  });
});

describe('argumentsSha256', () => {
  it('hashes the RFC 8785 canonical form, so key order and number spelling do not matter', () => {
    const a = argumentsSha256({ expected_version: 17, destination: { kind: 'saved', address_id: 'a1' } });
    const b = argumentsSha256(JSON.parse('{"destination":{"address_id":"a1","kind":"saved"},"expected_version":17.0}'));
    expect(a).toBe(b);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(argumentsSha256({ expected_version: 18, destination: { kind: 'saved', address_id: 'a1' } })).not.toBe(a);
  });

  it('matches a hash computed independently from the canonical text', () => {
    const canonical = '{"a":{"c":true},"b":[1,"x"]}';
    expect(argumentsSha256({ b: [1, 'x'], a: { c: true } })).toBe(createHash('sha256').update(canonical).digest('hex'));
  });
});
