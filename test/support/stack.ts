import { randomUUID } from 'node:crypto';
import type { KafkaMessage } from 'kafkajs';
import { eventsConfigFromEnv, EventSerde, KafkaAdmin, provisionTopics, topicNames } from '@gatehouse/events';
import type { EventsConfig, Topics } from '@gatehouse/events';
import { createLogger } from '@gatehouse/telemetry';
import { inject } from 'vitest';
import { testKafka } from './kafkajs.js';
import type { TestKafka } from './kafkajs.js';
import { TEST_TOPIC_PREFIX } from './topic-cleanup.js';

export const config: EventsConfig = eventsConfigFromEnv();
export const logger = createLogger('test', { level: process.env['LOG_LEVEL'] ?? 'silent' });

/** A topic prefix no other test uses, so tests run in parallel on one cluster. */
export function uniquePrefix(label: string): string {
  // The run's mark (from test/support/topic-cleanup.ts) lets the run delete its own topics at the end.
  return `${TEST_TOPIC_PREFIX}${inject('topicRun') ?? 'adhoc'}-${label}-${randomUUID().slice(0, 8)}.`;
}

export function kafkaFor(label: string): TestKafka {
  return testKafka(config, `gatehouse-test-${label}`);
}

export interface TestTopics {
  readonly kafka: TestKafka;
  readonly topics: Topics;
  readonly serde: EventSerde;
}

/** Provisions a fresh set of Gatehouse topics (and DLQs) and registers their schemas. */
export async function freshTopics(label: string, partitions = 3, on: EventsConfig = config): Promise<TestTopics> {
  const kafka = testKafka(on, `gatehouse-test-${label}`);
  const topics = topicNames(uniquePrefix(label));
  const admin = await KafkaAdmin.connect(kafka);
  try {
    // The stack's single broker, unless the test names a cluster (`on`) and its replication.
    const replicationFactor = on === config ? 1 : on.topicSettings.replicationFactor;
    await provisionTopics(admin, topics, { ...config.topicSettings, partitions, replicationFactor });
  } finally {
    await admin.close();
  }
  const serde = new EventSerde({ registryUrl: config.registryUrl, topics });
  await serde.registerAll();
  return { kafka, topics, serde };
}

/** Resolves when `check` returns a value other than undefined, polling an in-memory state; rejects after `timeoutMs`. */
export async function eventually<T>(check: () => T | undefined, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Reads raw records of a topic from the beginning until `count` have arrived (bounded by `timeoutMs`). */
export async function readRaw(kafka: TestKafka, topic: string, count: number, timeoutMs = 20_000): Promise<KafkaMessage[]> {
  const consumer = kafka.consumer({ groupId: `reader-${randomUUID()}` });
  const seen: KafkaMessage[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: ({ message }) => {
        seen.push(message);
        return Promise.resolve();
      },
    });
    await eventually(() => (seen.length >= count ? true : undefined), timeoutMs, `${count} records on ${topic}`);
    return seen;
  } finally {
    await consumer.disconnect();
  }
}

export { redisUrlFromEnv } from '@gatehouse/state';
