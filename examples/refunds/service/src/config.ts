/** The refunds service's settings, read and checked once at start-up. */
export interface RefundsConfig {
  readonly databaseUrl: string;
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** PostgreSQL schema that holds every table; tests use one schema each. */
  readonly schema: string;
}

export const REFUNDS_ENV_DEFAULTS = {
  REFUNDS_DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/gatehouse',
  REFUNDS_HOST: '127.0.0.1',
  REFUNDS_PORT: '8094',
  REFUNDS_DB_SCHEMA: 'refunds',
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

/** Reads REFUNDS_* once; throws naming the refused variable. */
export function refundsConfigFromEnv(env: Env = process.env): RefundsConfig {
  const databaseUrl = read(env, 'REFUNDS_DATABASE_URL');
  if (!/^postgres(ql)?:\/\//.test(databaseUrl)) throw invalid('REFUNDS_DATABASE_URL must be a postgres:// URL');
  const rawPort = read(env, 'REFUNDS_PORT');
  const port = Number(rawPort);
  if (!Number.isSafeInteger(port) || port < 0 || port > 65_535) throw invalid(`REFUNDS_PORT must be an integer in 0..65535, got "${rawPort}"`);
  return {
    databaseUrl,
    host: read(env, 'REFUNDS_HOST'),
    port,
    schema: checkSchemaName(read(env, 'REFUNDS_DB_SCHEMA')),
  };
}
