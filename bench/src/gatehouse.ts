import { randomUUID } from 'node:crypto';
import { startExecutor } from '@gatehouse/executor';
import type { RunningExecutor } from '@gatehouse/executor';
import { startPolicyService } from '@gatehouse/policy';
import type { RunningPolicyService } from '@gatehouse/policy';
import { generateSigningKey, parseSigningKey, parseTrustedKeys } from '@gatehouse/events';
import type { Redis } from '@gatehouse/state';
import type { Kafka } from 'kafkajs';
import { benchCatalog } from './bench-catalog.js';
import type { ArmTopics } from './stack.js';
import { config, serviceLogger, startGroupAtBeginning } from './stack.js';

/** Settings of the executors of every arm (in-process and processes alike). */
export const EXECUTOR_SETTINGS = {
  concurrency: 64,
  perTenantConcurrency: 8,
  leaseMs: 5_000,
  proposalTtlMs: 600_000,
  limits: { tenantDefault: 8, tenants: {}, run: 4 },
} as const;

/** Settings of the policy service of every arm. */
export const POLICY_SETTINGS = { concurrency: 64, maxArgumentBytes: 64 * 1024 } as const;

/** The bench's order-signing pair: the policy service signs, every executor (in-process or not) trusts. */
export const BENCH_SIGNING = generateSigningKey('bench');
const SIGNING_KEY = parseSigningKey(BENCH_SIGNING.signingKey);
const TRUSTED_KEYS = parseTrustedKeys(BENCH_SIGNING.trustedKey);

/** A Gatehouse on one arm's topics: its policy service in this process, executors here or elsewhere. */
export interface BenchGatehouse {
  readonly redisPrefix: string;
  readonly executorGroupId: string;
  stop(): Promise<void>;
}

export interface GatehouseOptions {
  /** Executors to start in this process (0 when they run as processes). */
  readonly inProcessExecutors: number;
  /** Records one executor works on at once (EXECUTOR_SETTINGS.concurrency when absent). */
  readonly executorConcurrency?: number;
}

export async function startBenchGatehouse(kafka: Kafka, arm: ArmTopics, redis: Redis, options: GatehouseOptions): Promise<BenchGatehouse> {
  const { catalog, implementations, roles, table } = benchCatalog();
  const redisPrefix = `bench-${arm.label}-${randomUUID().slice(0, 8)}:`;
  const policyGroupId = `${arm.prefix}policy`;
  const executorGroupId = `${arm.prefix}executor`;
  await startGroupAtBeginning(kafka, policyGroupId, arm.topics.commands);
  await startGroupAtBeginning(kafka, executorGroupId, arm.topics.execute);

  const policy: RunningPolicyService = await startPolicyService({
    events: config,
    topics: arm.topics,
    redis,
    redisPrefix,
    catalog,
    roles,
    table,
    logger: serviceLogger,
    controlToken: randomUUID(),
    signingKey: SIGNING_KEY,
    host: '127.0.0.1',
    port: 0,
    maxArgumentBytes: POLICY_SETTINGS.maxArgumentBytes,
    maxRunTtlMs: 3_600_000,
    groupId: policyGroupId,
    concurrency: POLICY_SETTINGS.concurrency,
    instanceId: `${arm.label}-policy`,
  });
  const executors: RunningExecutor[] = [];
  for (let i = 0; i < options.inProcessExecutors; i += 1) {
    executors.push(
      await startExecutor({
        events: config,
        topics: arm.topics,
        redis,
        redisPrefix,
        catalog,
        implementations,
        trustedKeys: TRUSTED_KEYS,
        logger: serviceLogger,
        executorId: `${arm.label}-exec-${i}`,
        groupId: executorGroupId,
        concurrency: options.executorConcurrency ?? EXECUTOR_SETTINGS.concurrency,
        perTenantConcurrency: EXECUTOR_SETTINGS.perTenantConcurrency,
        leaseMs: EXECUTOR_SETTINGS.leaseMs,
        proposalTtlMs: EXECUTOR_SETTINGS.proposalTtlMs,
        limits: EXECUTOR_SETTINGS.limits,
      }),
    );
  }
  await Promise.all([policy.joined, ...executors.map((e) => e.joined)]);
  return {
    redisPrefix,
    executorGroupId,
    stop: async () => {
      await Promise.all(executors.map((e) => e.stop({ drainTimeoutMs: 2_000 })));
      await policy.stop();
    },
  };
}
