import { existsSync } from 'node:fs';
/** The refunds service's settings, read and checked once at start-up. */
export interface RefundsConfig {
  readonly databaseUrl: string;
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** PostgreSQL schema that holds every table; tests use one schema each. */
  readonly schema: string;
  /** What every call's assertion is checked against: the executors' keys, the issuer and this service's audience. */
  readonly assertions: { readonly keys: string; readonly issuer: string; readonly audience: string };
}

export const REFUNDS_ENV_DEFAULTS = {
  REFUNDS_DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/gatehouse',
  REFUNDS_HOST: '127.0.0.1',
  REFUNDS_PORT: '8094',
  REFUNDS_DB_SCHEMA: 'refunds',
  REFUNDS_ASSERTION_ISSUER: 'urn:gatehouse',
  REFUNDS_ASSERTION_AUDIENCE: 'refunds',
} as const;

type EnvName = keyof typeof REFUNDS_ENV_DEFAULTS;
type Env = Readonly<Record<string, string | undefined>>;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

function invalid(message: string): Error {
  return new Error(`invalid refunds configuration: ${message}`);
}

/** An empty variable is unset, as for every Gatehouse variable. */
function read(env: Env, name: EnvName): string {
  const value = env[name];
  return value === undefined || value === '' ? REFUNDS_ENV_DEFAULTS[name] : value;
}

/** Throws unless `name` is a plain lower-case PostgreSQL identifier (it is interpolated into SQL). */
export function checkSchemaName(name: string): string {
  if (!SCHEMA_NAME.test(name)) throw invalid(`schema name must match ${SCHEMA_NAME.source}, got "${name}"`);
  return name;
}

/** REFUNDS_ASSERTION_KEYS: the executors' JWKS URL, or a file holding the set. Required: no call is served unchecked. */
function assertionKeys(env: Env): string {
  const value = env['REFUNDS_ASSERTION_KEYS'];
  if (value === undefined || value === '')
    throw invalid(
      "REFUNDS_ASSERTION_KEYS is required: the executors' JWKS: a file holding it (`gatehouse keys jwks`), or its https URL (plain http only on loopback)",
    );
  if (!/^https?:\/\//.test(value) && !existsSync(value))
    throw invalid(`REFUNDS_ASSERTION_KEYS names ${value}, which is neither an http(s) URL nor a file`);
  return value;
}

/** Reads REFUNDS_* once; throws naming the refused variable. */
export function refundsConfigFromEnv(env: Env = process.env): RefundsConfig {
  const databaseUrl = read(env, 'REFUNDS_DATABASE_URL');
  if (!/^postgres(ql)?:\/\//.test(databaseUrl)) throw invalid('REFUNDS_DATABASE_URL must be a postgres:// URL');
  const rawPort = read(env, 'REFUNDS_PORT');
  const port = Number(rawPort);
  if (!Number.isSafeInteger(port) || port < 0 || port > 65_535)
    throw invalid(`REFUNDS_PORT must be an integer in 0..65535, got "${rawPort}"`);
  return {
    databaseUrl,
    host: read(env, 'REFUNDS_HOST'),
    port,
    schema: checkSchemaName(read(env, 'REFUNDS_DB_SCHEMA')),
    assertions: {
      keys: assertionKeys(env),
      issuer: read(env, 'REFUNDS_ASSERTION_ISSUER'),
      audience: read(env, 'REFUNDS_ASSERTION_AUDIENCE'),
    },
  };
}
