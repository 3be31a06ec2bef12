import { fileURLToPath } from 'node:url';
import { eventsConfigFromEnv } from '@gatehouse/events';
import type { EventsConfig } from '@gatehouse/events';
import { redisUrlFromEnv } from '@gatehouse/state';

export interface PolicyConfig {
  readonly events: EventsConfig;
  readonly redisUrl: string;
  readonly redisPrefix: string;
  readonly host: string;
  readonly port: number;
  readonly controlToken: string;
  readonly rolesFile: string;
  readonly policyTableFile: string;
  readonly maxArgumentBytes: number;
  readonly maxRunTtlMs: number;
  readonly groupId: string;
  readonly concurrency: number;
  readonly sessionTimeoutMs: number;
}

type Env = Readonly<Record<string, string | undefined>>;

function int(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

export const DEFAULT_ROLES_FILE = fileURLToPath(new URL('../../../config/roles.json', import.meta.url));
export const DEFAULT_POLICY_TABLE_FILE = fileURLToPath(new URL('../../../config/policy-table.json', import.meta.url));

/** Reads and checks the policy service's settings once, at start-up. */
export function policyConfigFromEnv(env: Env = process.env): PolicyConfig {
  const controlToken = env['GATEHOUSE_CONTROL_TOKEN'] ?? '';
  if (controlToken.length < 16) {
    throw new Error('GATEHOUSE_CONTROL_TOKEN must be set (at least 16 characters): trusted code uses it to register runs');
  }
  const events = eventsConfigFromEnv(env);
  return {
    events,
    redisUrl: redisUrlFromEnv(env),
    redisPrefix: env['GATEHOUSE_REDIS_PREFIX'] ?? 'gh:',
    host: env['POLICY_HOST'] ?? '127.0.0.1',
    port: int(env, 'POLICY_PORT', 8091),
    controlToken,
    rolesFile: env['GATEHOUSE_ROLES_FILE'] ?? DEFAULT_ROLES_FILE,
    policyTableFile: env['GATEHOUSE_POLICY_TABLE_FILE'] ?? DEFAULT_POLICY_TABLE_FILE,
    maxArgumentBytes: int(env, 'GATEHOUSE_MAX_ARGUMENT_BYTES', 64 * 1024),
    maxRunTtlMs: int(env, 'GATEHOUSE_MAX_RUN_TTL_MS', 24 * 3600 * 1000),
    // Deployments sharing a cluster under different topic prefixes must not share a group.
    groupId: env['POLICY_GROUP_ID'] ?? `${events.topicPrefix}gatehouse-policy`,
    concurrency: int(env, 'POLICY_CONCURRENCY', 64),
    // How soon the group notices a dead instance and hands its partitions to the others.
    sessionTimeoutMs: int(env, 'POLICY_SESSION_TIMEOUT_MS', 10_000),
  };
}
