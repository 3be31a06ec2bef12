import { fileURLToPath } from 'node:url';
import { eventsConfigFromEnv } from '@gatehouse/events';
import type { EventsConfig } from '@gatehouse/events';
import { redisUrlFromEnv } from '@gatehouse/state';

/** The approval service's settings, read and checked once at start-up. */
export interface ApprovalConfig {
  readonly events: EventsConfig;
  readonly databaseUrl: string;
  /** PostgreSQL schema holding the service's tables; tests use one schema each. */
  readonly schema: string;
  readonly redisUrl: string;
  readonly redisPrefix: string;
  readonly host: string;
  readonly port: number;
  readonly approversFile: string;
  /** How long an approval may be used after it is given (never past the request's expiry). */
  readonly approvalValidityMs: number;
  /** How often lapsed requests are expired and unpublished decisions retried. */
  readonly sweepMs: number;
  /** How long a decision whose events were not confirmed published waits before the outbox retries it. */
  readonly outboxRetryMs: number;
  readonly groupId: string;
}

export const DEFAULT_APPROVERS_FILE = fileURLToPath(new URL('../../../config/approvers.json', import.meta.url));

export const APPROVAL_ENV_DEFAULTS = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/gatehouse',
  APPROVALS_DB_SCHEMA: 'approvals',
  GATEHOUSE_REDIS_PREFIX: 'gh:',
  APPROVAL_HOST: '127.0.0.1',
  APPROVAL_PORT: '8093',
  GATEHOUSE_APPROVERS_FILE: DEFAULT_APPROVERS_FILE,
  APPROVAL_VALIDITY_MS: String(10 * 60 * 1000),
  APPROVAL_SWEEP_MS: '1000',
  APPROVAL_OUTBOX_RETRY_MS: '10000',
  APPROVAL_GROUP_ID: 'gatehouse-approval',
} as const;

type EnvName = keyof typeof APPROVAL_ENV_DEFAULTS;
type Env = Readonly<Record<string, string | undefined>>;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

function read(env: Env, name: EnvName): string {
  const value = env[name];
  return value === undefined || value === '' ? APPROVAL_ENV_DEFAULTS[name] : value;
}

function invalid(message: string): Error {
  return new Error(`invalid approval configuration: ${message}`);
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

export function approvalConfigFromEnv(env: Env = process.env): ApprovalConfig {
  const databaseUrl = read(env, 'DATABASE_URL');
  if (!/^postgres(ql)?:\/\//.test(databaseUrl)) throw invalid('DATABASE_URL must be a postgres:// URL');
  const events = eventsConfigFromEnv(env);
  const groupId = env['APPROVAL_GROUP_ID'];
  return {
    events,
    databaseUrl,
    schema: checkSchemaName(read(env, 'APPROVALS_DB_SCHEMA')),
    redisUrl: redisUrlFromEnv(env),
    redisPrefix: read(env, 'GATEHOUSE_REDIS_PREFIX'),
    host: read(env, 'APPROVAL_HOST'),
    port: integer(env, 'APPROVAL_PORT', 0, 65_535),
    approversFile: read(env, 'GATEHOUSE_APPROVERS_FILE'),
    approvalValidityMs: integer(env, 'APPROVAL_VALIDITY_MS', 1_000, 24 * 3600 * 1000),
    sweepMs: integer(env, 'APPROVAL_SWEEP_MS', 10, 60_000),
    outboxRetryMs: integer(env, 'APPROVAL_OUTBOX_RETRY_MS', 100, 3_600_000),
    // Deployments sharing a cluster under different topic prefixes must not share a group.
    groupId: groupId === undefined || groupId === '' ? `${events.topicPrefix}${APPROVAL_ENV_DEFAULTS.APPROVAL_GROUP_ID}` : groupId,
  };
}
