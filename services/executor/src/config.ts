import { hostname } from 'node:os';
import { eventsConfigFromEnv } from '@gatehouse/events';
import type { EventsConfig } from '@gatehouse/events';
import { redisUrlFromEnv } from '@gatehouse/state';
import type { SlotLimits } from './write-path.js';

export interface ExecutorConfig {
  readonly events: EventsConfig;
  readonly redisUrl: string;
  readonly redisPrefix: string;
  readonly executorId: string;
  readonly groupId: string;
  readonly concurrency: number;
  readonly perTenantConcurrency: number;
  readonly leaseMs: number;
  readonly sessionTimeoutMs: number;
  readonly proposalTtlMs: number;
  readonly limits: SlotLimits;
  readonly port: number;
  readonly host: string;
}

type Env = Readonly<Record<string, string | undefined>>;

function int(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

function tenantLimits(env: Env): Record<string, number> {
  const raw = env['GATEHOUSE_TENANT_SLOT_LIMITS'];
  if (raw === undefined || raw === '') return {};
  const parsed = JSON.parse(raw) as unknown;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error('GATEHOUSE_TENANT_SLOT_LIMITS must be a JSON object of tenant → limit');
  }
  const limits: Record<string, number> = {};
  for (const [tenant, limit] of Object.entries(parsed)) {
    if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1) {
      throw new Error(`GATEHOUSE_TENANT_SLOT_LIMITS: the limit of ${tenant} must be a positive integer`);
    }
    limits[tenant] = limit;
  }
  return limits;
}

/** Reads and checks the executor's settings once, at start-up. */
export function executorConfigFromEnv(env: Env = process.env): ExecutorConfig {
  const events = eventsConfigFromEnv(env);
  return {
    events,
    redisUrl: redisUrlFromEnv(env),
    redisPrefix: env['GATEHOUSE_REDIS_PREFIX'] ?? 'gh:',
    executorId: env['EXECUTOR_ID'] ?? `${hostname()}-${process.pid}`,
    // Deployments sharing a cluster under different topic prefixes must not share a group.
    groupId: env['EXECUTOR_GROUP_ID'] ?? `${events.topicPrefix}gatehouse-executor`,
    concurrency: int(env, 'EXECUTOR_CONCURRENCY', 64),
    perTenantConcurrency: int(env, 'EXECUTOR_TENANT_CONCURRENCY', 8),
    leaseMs: int(env, 'EXECUTOR_LEASE_MS', 5_000),
    sessionTimeoutMs: int(env, 'EXECUTOR_SESSION_TIMEOUT_MS', 10_000),
    proposalTtlMs: int(env, 'GATEHOUSE_PROPOSAL_TTL_MS', 15 * 60 * 1000),
    limits: {
      tenantDefault: int(env, 'GATEHOUSE_TENANT_SLOTS', 8),
      tenants: tenantLimits(env),
      run: int(env, 'GATEHOUSE_RUN_SLOTS', 4),
    },
    port: env['EXECUTOR_PORT'] === '0' ? 0 : int(env, 'EXECUTOR_PORT', 8092),
    host: env['EXECUTOR_HOST'] ?? '127.0.0.1',
  };
}
