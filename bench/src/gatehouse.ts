import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { BENCH_KEYS } from './bench-keys.js';
import { AssignerProtocol } from 'kafkajs';
import type { Kafka } from 'kafkajs';
import { Child } from './child-process.js';
import type { ArmTopics } from './stack.js';
import { PARTITIONS, startGroupAtBeginning } from './stack.js';

/** Settings of the executors of every arm. */
export const EXECUTOR_SETTINGS = {
  concurrency: 64,
  perTenantConcurrency: 8,
  leaseMs: 5_000,
  proposalTtlMs: 600_000,
  limits: { tenantDefault: 8, tenants: {}, run: 4 },
} as const;

/** Settings of the policy service of every arm. */
export const POLICY_SETTINGS = { concurrency: 64, maxArgumentBytes: 64 * 1024 } as const;

/** What a service process (service-process.ts) is asked to start. */
export interface ServiceStart {
  readonly role: 'policy' | 'executor';
  /** The policy service's instance id or the executor's id. */
  readonly name: string;
  readonly topicPrefix: string;
  readonly redisPrefix: string;
  readonly groupId: string;
  /** Records an executor works on at once. */
  readonly concurrency: number;
  /** The bench's signing pairs (BENCH_KEYS): each service signs with its role's, executors trust the policy key. */
  readonly keys: typeof BENCH_KEYS;
}

/** A Gatehouse on one arm's topics: its policy service and its executors, each an OS process. */
export interface BenchGatehouse {
  readonly redisPrefix: string;
  /** The policy service's process, then each executor's. */
  readonly policy: Child;
  readonly executors: readonly Child[];
  /** Peak resident set of each executor process so far (VmHWM), in MiB. */
  executorPeakRssMiB(): number[];
  stop(): Promise<void>;
}

export interface GatehouseOptions {
  readonly executors: number;
  /** Records one executor works on at once (EXECUTOR_SETTINGS.concurrency when absent). */
  readonly executorConcurrency?: number;
  /** Added to every service process's environment (undefined removes a variable). */
  readonly env: Readonly<Record<string, string | undefined>>;
}

export async function startBenchGatehouse(kafka: Kafka, arm: ArmTopics, options: GatehouseOptions): Promise<BenchGatehouse> {
  const redisPrefix = `bench-${arm.label}-${randomUUID().slice(0, 8)}:`;
  const policyGroupId = `${arm.prefix}policy`;
  const executorGroupId = `${arm.prefix}executor`;
  await startGroupAtBeginning(kafka, policyGroupId, arm.topics.commands);
  await startGroupAtBeginning(kafka, executorGroupId, arm.topics.execute);

  const service = (role: ServiceStart['role'], name: string, groupId: string): ServiceStart => ({
    role,
    name,
    topicPrefix: arm.prefix,
    redisPrefix,
    groupId,
    concurrency: options.executorConcurrency ?? EXECUTOR_SETTINGS.concurrency,
    keys: BENCH_KEYS,
  });
  const policy = new Child(`${arm.label} policy`, './service-process.js', options.env);
  const executors = Array.from(
    { length: options.executors },
    (_, i) => new Child(`${arm.label} executor ${i}`, './service-process.js', options.env),
  );
  const stop = async () => {
    // Executors first, so none is left with a record the policy service has not finished routing.
    await Promise.all(executors.map((e) => e.stop()));
    await policy.stop();
  };
  try {
    await Promise.all([
      policy.ask('start', service('policy', `${arm.label}-policy`, policyGroupId)),
      ...executors.map((e, i) => e.ask('start', service('executor', `${arm.label}-exec-${i}`, executorGroupId))),
    ]);
    await untilGroupHoldsAll(kafka, executorGroupId, arm.topics.execute, options.executors);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    redisPrefix,
    policy,
    executors,
    executorPeakRssMiB: () => executors.flatMap((e) => (e.pid === undefined ? [] : [statusKiB(e.pid, 'VmHWM') / 1024])),
    stop,
  };
}

/** Waits until `count` members of `groupId` together hold every partition of `topic` (each executor has joined the last rebalance). */
async function untilGroupHoldsAll(kafka: Kafka, groupId: string, topic: string, count: number, timeoutMs = 60_000): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const started = Date.now();
    for (;;) {
      const { groups } = await admin.describeGroups([groupId]);
      const members = groups[0]?.state === 'Stable' ? groups[0].members : [];
      const held = new Set(
        members.flatMap((m) =>
          m.memberAssignment.length === 0 ? [] : (AssignerProtocol.MemberAssignment.decode(m.memberAssignment)?.assignment[topic] ?? []),
        ),
      );
      if (members.length === count && held.size === PARTITIONS) return;
      if (Date.now() - started > timeoutMs) throw new Error(`executor group ${groupId} not ready after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    await admin.disconnect();
  }
}

/** A `Vm*` line of /proc/<pid>/status, in KiB (0 when the process is gone). */
function statusKiB(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${field}:`));
    return line === undefined ? 0 : Number(/(\d+)/.exec(line)?.[1] ?? 0);
  } catch {
    return 0;
  }
}
