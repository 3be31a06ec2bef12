import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  API_ERROR_CODE_LIST,
  ApiErrorCode,
  ASSERTION_REFUSALS,
  entriesOn,
  ERROR_CODE_LIST,
  ERRORS,
  GatehouseError,
  IDENTITY_REFUSALS,
  isGatehouseError,
  surfaceTableMarkdown,
} from '@gatehouse/contracts';
import type { ErrorEntry, ErrorSurface } from '@gatehouse/contracts';

const repo = new URL('../../../', import.meta.url).pathname;
const errorsPage = readFileSync(join(repo, 'docs/errors.md'), 'utf8');
const SURFACES: readonly ErrorSurface[] = ['results', 'api', 'identity', 'assertion', 'process', 'cli'];
const entries = Object.entries(ERRORS) as [string, ErrorEntry][];

/** The HTTP APIs' own codes, in catalogue order: append only, never renamed or reused. */
const PINNED_API = [
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

/** Every `.ts` file under `dir`, recursively. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** The files that answer HTTP requests: every service's sources and the ops server. */
const httpSources = (): string[] => [
  ...readdirSync(join(repo, 'services')).flatMap((service) => sources(join(repo, 'services', service, 'src'))),
  join(repo, 'packages/runtime/src/ops-server.ts'),
];

describe('the one error catalogue', () => {
  it('gives every code one sentence, a retryable default, at least one surface, and a status exactly where HTTP answers it', () => {
    for (const [code, entry] of entries) {
      expect(code).toMatch(/^[A-Z][A-Z_]+$/);
      expect(entry.meaning, code).not.toMatch(/[\r\n]/);
      expect(entry.meaning, code).toMatch(/^[A-Z`'"].{9,}\.$/);
      expect(typeof entry.retryable, code).toBe('boolean');
      expect(entry.on.length, code).toBeGreaterThan(0);
      for (const surface of entry.on) expect(SURFACES, code).toContain(surface);
      const http = entry.on.some((surface) => surface === 'api' || surface === 'identity' || surface === 'assertion');
      expect(entry.status !== undefined, code).toBe(http);
    }
  });

  it('has one entry per code: TENANT_MISMATCH, RUN_NOT_FOUND and CONFIG_INVALID each mean one thing wherever they are answered', () => {
    expect(ERRORS.TENANT_MISMATCH.on).toEqual(['results', 'assertion']);
    expect(ASSERTION_REFUSALS.TENANT_MISMATCH).toBe(ERRORS.TENANT_MISMATCH);
    expect(ERRORS.RUN_NOT_FOUND.on).toEqual(['results', 'process']);
    expect(ERRORS.CONFIG_INVALID.on).toEqual(['process']);
    const all = SURFACES.flatMap((surface) => Object.keys(entriesOn(surface)));
    expect(new Set(all)).toEqual(new Set(Object.keys(ERRORS)));
  });

  it("holds the HTTP APIs' pinned codes in catalogue order, none shared with the result codes", () => {
    expect(API_ERROR_CODE_LIST).toEqual(PINNED_API);
    expect(Object.keys(ApiErrorCode)).toEqual(PINNED_API);
    for (const code of PINNED_API) expect(ERROR_CODE_LIST as readonly string[]).not.toContain(code);
  });

  it('answers identity refusals with 400, 401, 403, 404 or 503, and assertion refusals with 401, 403 or 503', () => {
    for (const [code, entry] of Object.entries(IDENTITY_REFUSALS)) expect([400, 401, 403, 404, 503], code).toContain(entry.status);
    for (const [code, entry] of Object.entries(ASSERTION_REFUSALS)) expect([401, 403, 503], code).toContain(entry.status);
    expect(IDENTITY_REFUSALS.TOKEN_EXPIRED.status).toBe(401);
    expect(ASSERTION_REFUSALS.BODY_MISMATCH.status).toBe(403);
  });

  it.each(['api-error-codes', 'identity-refusals', 'assertion-refusals', 'process-errors', 'cli-errors'] as const)(
    'is in docs/errors.md exactly as generated: %s (run node scripts/readme-tables.mjs)',
    (marker) => {
      const surface = (
        {
          'api-error-codes': 'api',
          'identity-refusals': 'identity',
          'assertion-refusals': 'assertion',
          'process-errors': 'process',
          'cli-errors': 'cli',
        } as const
      )[marker];
      const block = new RegExp(`<!-- ${marker}:start -->\\n([\\s\\S]*?)<!-- ${marker}:end -->`).exec(errorsPage)?.[1];
      expect(block?.trimEnd()).toBe(surfaceTableMarkdown(surface).trimEnd());
    },
  );

  it('covers every code the services answer', () => {
    const unknown: string[] = [];
    for (const file of httpSources()) {
      const source = readFileSync(file, 'utf8');
      for (const match of source.matchAll(/\bcode: '([A-Z][A-Z_]+)'|errorBody\('([A-Z][A-Z_]+)'/g)) {
        const code = match[1] ?? match[2] ?? '';
        if (!Object.hasOwn(ERRORS, code)) unknown.push(`${file.slice(repo.length)}: ${code}`);
      }
    }
    expect(unknown).toEqual([]);
  });

  it('covers every code a package throws and the CLI reports', () => {
    const unknown: string[] = [];
    const files = readdirSync(join(repo, 'packages')).flatMap((name) => sources(join(repo, 'packages', name, 'src')));
    expect(files.length).toBeGreaterThan(100);
    for (const file of files) {
      const source = readFileSync(file, 'utf8');
      const thrown = source.matchAll(/new (?:CliError\(ExitCode\.\w+, |\w+Error\()'([A-Z][A-Z_]+)'|GatehouseError<'([A-Z][A-Z_]+)'>/g);
      for (const match of thrown) {
        const code = match[1] ?? match[2] ?? '';
        if (!Object.hasOwn(ERRORS, code)) unknown.push(`${file.slice(repo.length)}: ${code}`);
      }
    }
    expect(unknown).toEqual([]);
  });

  it('is what every error class of the packages and services extends: no other class extends Error', () => {
    const dirs = ['packages', 'services'].flatMap((group) => readdirSync(join(repo, group)).map((name) => join(repo, group, name, 'src')));
    const plain = dirs
      .flatMap((dir) => sources(dir))
      .filter((file) => /\bextends Error\b/.test(readFileSync(file, 'utf8')))
      .map((file) => file.slice(repo.length));
    expect(plain).toEqual(['packages/contracts/src/gatehouse-error.ts']);
  });
});

describe('GatehouseError', () => {
  it('takes `retryable` from the catalogue unless the thrower says otherwise, and names itself by its class', () => {
    class RegistryDown extends GatehouseError<'REGISTRY_UNAVAILABLE'> {}
    const down = new RegistryDown('REGISTRY_UNAVAILABLE', 'the registry did not answer');
    expect(down.retryable).toBe(true);
    expect(down.name).toBe('RegistryDown');
    expect(down).toBeInstanceOf(Error);
    expect(isGatehouseError(down)).toBe(true);
    expect(new GatehouseError('REGISTRY_UNAVAILABLE', 'no', { retryable: false }).retryable).toBe(false);
    expect(new GatehouseError('CONFIG_INVALID', 'bad').retryable).toBe(false);
    const cause = new Error('socket closed');
    expect(new GatehouseError('TIMEOUT', 'late', { cause }).cause).toBe(cause);
  });

  it('is told from other errors by its shape, so a second copy of the package is recognised too', () => {
    const foreign = Object.assign(new Error('x'), { code: 'STORE_UNCONFIRMED', retryable: true });
    expect(isGatehouseError(foreign)).toBe(true);
    expect(isGatehouseError(Object.assign(new Error('x'), { code: 'ENOENT', retryable: false }))).toBe(false);
    expect(isGatehouseError({ code: 'TIMEOUT', retryable: true })).toBe(false);
  });

  it('passes on a code from elsewhere unchanged, and is then not retryable unless told', () => {
    const passedOn = new GatehouseError<string>('HTTP_418', 'a teapot');
    expect(passedOn.code).toBe('HTTP_418');
    expect(passedOn.retryable).toBe(false);
  });
});
