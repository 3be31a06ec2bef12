import { readFileSync } from 'node:fs';
/** The service's settings, read and checked once at start-up. */
export interface CustomersConfig {
  readonly databaseUrl: string;
  readonly host: string;
  readonly port: number;
  /** PostgreSQL schema that holds every table; tests use one schema each. */
  readonly schema: string;
  /** Duration of each export phase (queued, running) in milliseconds. */
  readonly exportStepMs: number;
  /** Enables the `x-fault` header and the `/__faults`, `/__stats` routes. Never on by default. */
  readonly faultsEnabled: boolean;
  /** Key that signs order-list cursors, so a tampered cursor is refused. */
  readonly cursorSecret: string;
  /** What every call's assertion is checked against: the executors' keys, the issuer and this service's audience. */
  readonly assertions: { readonly keys: string; readonly issuer: string; readonly audience: string };
}

export const CUSTOMERS_ENV_DEFAULTS = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/gatehouse',
  CUSTOMERS_HOST: '127.0.0.1',
  CUSTOMERS_PORT: '8090',
  CUSTOMERS_DB_SCHEMA: 'customers',
  EXPORT_STEP_MS: '2000',
  CUSTOMERS_FAULTS: '0',
  CUSTOMERS_CURSOR_SECRET: 'gatehouse-customers-dev-cursor-key',
  CUSTOMERS_ASSERTION_ISSUER: 'urn:gatehouse',
  CUSTOMERS_ASSERTION_AUDIENCE: 'customers',
} as const;

type EnvName = keyof typeof CUSTOMERS_ENV_DEFAULTS;
type Env = Readonly<Record<string, string | undefined>>;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

function read(env: Env, name: EnvName): string {
  const value = env[name];
  return value === undefined || value === '' ? CUSTOMERS_ENV_DEFAULTS[name] : value;
}

function invalid(message: string): Error {
  return new Error(`invalid customers configuration: ${message}`);
}

function integer(env: Env, name: EnvName, min: number, max: number): number {
  const raw = read(env, name);
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw invalid(`${name} must be an integer in ${min}..${max}, got "${raw}"`);
  }
  return value;
}

/** Throws unless `name` is a plain lower-case PostgreSQL identifier (it is interpolated into SQL). */
export function checkSchemaName(name: string): string {
  if (!SCHEMA_NAME.test(name)) throw invalid(`schema name must match ${SCHEMA_NAME.source}, got "${name}"`);
  return name;
}

/**
 * CUSTOMERS_ASSERTION_KEYS: the executors' JWKS, as the URL they serve it at or a file holding it.
 * Required: without it no call can be checked, and the service answers none.
 */
function assertionKeys(env: Env): string {
  const value = env['CUSTOMERS_ASSERTION_KEYS'];
  if (value === undefined || value === '') {
    throw invalid(
      "CUSTOMERS_ASSERTION_KEYS is required: the executors' JWKS: a file holding it (`gatehouse keys jwks`), or its https URL (plain http only on loopback)",
    );
  }
  if (/^https?:\/\//.test(value)) return value;
  let keys: unknown;
  try {
    keys = (JSON.parse(readFileSync(value, 'utf8')) as { keys?: unknown }).keys;
  } catch (error) {
    throw invalid(
      `CUSTOMERS_ASSERTION_KEYS names ${value}, which is not a readable JSON file (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  if (!Array.isArray(keys)) throw invalid(`CUSTOMERS_ASSERTION_KEYS names ${value}, which is not a JWKS ({ "keys": [...] })`);
  return value;
}

export function customersConfigFromEnv(env: Env = process.env): CustomersConfig {
  const databaseUrl = read(env, 'DATABASE_URL');
  if (!/^postgres(ql)?:\/\//.test(databaseUrl)) throw invalid('DATABASE_URL must be a postgres:// URL');
  const faults = read(env, 'CUSTOMERS_FAULTS');
  if (faults !== '0' && faults !== '1') throw invalid(`CUSTOMERS_FAULTS must be 0 or 1, got "${faults}"`);
  return {
    databaseUrl,
    host: read(env, 'CUSTOMERS_HOST'),
    port: integer(env, 'CUSTOMERS_PORT', 0, 65_535),
    schema: checkSchemaName(read(env, 'CUSTOMERS_DB_SCHEMA')),
    exportStepMs: integer(env, 'EXPORT_STEP_MS', 1, 3_600_000),
    faultsEnabled: faults === '1',
    cursorSecret: read(env, 'CUSTOMERS_CURSOR_SECRET'),
    assertions: {
      keys: assertionKeys(env),
      issuer: read(env, 'CUSTOMERS_ASSERTION_ISSUER'),
      audience: read(env, 'CUSTOMERS_ASSERTION_AUDIENCE'),
    },
  };
}
