import { randomUUID } from 'node:crypto';
import { eventsConfigFromEnv, EventSerde, KafkaAdmin, provisionTopics, RunKey, topicNames } from '@gatehouse/events';
import type { EventsConfig, KafkaConnection, Topics } from '@gatehouse/events';
import { createRedis, Keyspace, redisUrlFromEnv, RunRegistry } from '@gatehouse/state';
import type { Redis } from '@gatehouse/state';
import { createLogger } from '@gatehouse/telemetry';
import type { Logger } from '@gatehouse/telemetry';
import type { Kafka } from 'kafkajs';
import { kafkajsClient } from './kafkajs-client.js';
import type { BenchKafka } from './kafkajs-client.js';

/** Partitions of every bench topic: divisible by 1, 2 and 3 executors. */
export const PARTITIONS = 6;

const base = eventsConfigFromEnv();

/**
 * The event settings of every arm: the local stack, PARTITIONS partitions, one replica unless
 * GATEHOUSE_TOPIC_REPLICATION says more (a run against a cluster, where answers go out in transactions).
 */
export const config: EventsConfig = {
  ...base,
  topicSettings: { ...base.topicSettings, partitions: PARTITIONS, retentionMs: 3_600_000 },
};

/**
 * Services log at `info`, as in production, so the cost of formatting a line per call stays in the
 * figures; the lines themselves are dropped (BENCH_LOG_LEVEL overrides the level; BENCH_SERVICE_LOGS=stderr shows them).
 */
export const serviceLogger: Logger = createLogger('bench', {
  level: process.env['BENCH_LOG_LEVEL'] ?? 'info',
  destination: process.env['BENCH_SERVICE_LOGS'] === 'stderr' ? process.stderr : { write: () => undefined },
});

export function benchKafka(clientId: string): BenchKafka {
  return kafkajsClient(config, clientId);
}

export function benchRedis(name: string): Redis {
  return createRedis(redisUrlFromEnv(), name);
}

/** A fresh set of Gatehouse topics for one arm, named under a prefix no other arm or run uses. */
export interface ArmTopics {
  readonly label: string;
  readonly prefix: string;
  readonly topics: Topics;
  readonly serde: EventSerde;
}

export async function freshTopics(kafka: KafkaConnection, label: string): Promise<ArmTopics> {
  const prefix = `bench-${label}-${randomUUID().slice(0, 8)}.`;
  const topics = topicNames(prefix);
  const admin = await KafkaAdmin.connect(kafka);
  try {
    await provisionTopics(admin, topics, config.topicSettings);
  } finally {
    await admin.close();
  }
  const serde = new EventSerde({ registryUrl: config.registryUrl, topics });
  await serde.registerAll();
  return { label, prefix, topics, serde };
}

/**
 * Commits offset 0 of `topic` for `groupId` before the group first joins: a new group would start
 * at the end of the topic, and a record published between its join and its first fetch be skipped.
 */
export async function startGroupAtBeginning(kafka: Kafka, groupId: string, topic: string): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.setOffsets({
      groupId,
      topic,
      partitions: Array.from({ length: PARTITIONS }, (_, partition) => ({ partition, offset: '0' })),
    });
  } finally {
    await admin.disconnect();
  }
}

/** Who the driver calls as: one run per tenant. */
export interface BenchRun {
  readonly runId: string;
  readonly tenant: string;
  /** The run's key (`run_key`), as the control API would have returned it: its commands are proved with it. Absent for the relays' runs, which nothing checks. */
  readonly runKey?: string;
}

/**
 * Registers `count` runs of the bench role, each of its own tenant, straight in Redis (as the
 * control API would), so executor slots and per-tenant ordering spread the load as many agents do.
 */
export async function registerRuns(redis: Redis, redisPrefix: string, capabilities: readonly string[], count: number): Promise<BenchRun[]> {
  const registry = new RunRegistry(redis, new Keyspace(redisPrefix));
  const now = Date.now();
  const runs: BenchRun[] = [];
  for (let i = 0; i < count; i += 1) {
    const key = RunKey.generate();
    const run = {
      run_id: `run_bench_${randomUUID().replace(/-/g, '').slice(0, 20)}`,
      tenant: `bench-tenant-${String(i).padStart(3, '0')}`,
      principal: 'agent:bench',
      role: 'bench-agent',
      capabilities,
      environment: 'sandbox',
      created_at: now,
      expires_at: now + 3_600_000,
      stopped_at: null,
      proof_key: key.publicKey(),
    };
    if (!(await registry.create(run))) throw new Error(`run id ${run.run_id} is taken`);
    runs.push({ runId: run.run_id, tenant: run.tenant, runKey: key.text() });
  }
  return runs;
}
