// Global setup of the integration and fault projects. Every test makes its own topics; a broker
// that keeps thousands of their partitions restarts slowly and wastes disk. Each run marks its
// topic prefixes (`t-<run>-…`, see uniquePrefix) and deletes exactly those topics at the end, so
// runs side by side on one cluster never delete each other's topics.
import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { eventsConfigFromEnv } from '@gatehouse/events';
import { testKafka } from './kafkajs.js';

export const TEST_TOPIC_PREFIX = 't-';
const BATCH = 100;

declare module 'vitest' {
  export interface ProvidedContext {
    /** The mark of this run's topic prefixes. */
    topicRun: string;
  }
}

let run = '';

export function setup(project: TestProject): void {
  run = randomBytes(3).toString('hex');
  project.provide('topicRun', run);
}

export async function teardown(): Promise<void> {
  if (run === '') return;
  const admin = testKafka(eventsConfigFromEnv(), 'gatehouse-test-cleanup').admin();
  await admin.connect();
  try {
    const mine = (await admin.listTopics()).filter((t) => t.startsWith(`${TEST_TOPIC_PREFIX}${run}-`));
    for (let i = 0; i < mine.length; i += BATCH) {
      await admin.deleteTopics({ topics: mine.slice(i, i + BATCH), timeout: 30_000 });
    }
  } finally {
    await admin.disconnect();
  }
}
