import { readRanges } from '@gatehouse/events';
import type { EventsConfig, KafkaAdmin } from '@gatehouse/events';
import { startEventRuntime } from '@gatehouse/runtime';
import { logger } from './stack.js';
import type { TestTopics } from './stack.js';

/**
 * The command ids a read_committed reader finds on a results partition, from its start to its end
 * now: the answers a subscriber sees, each as often as it sees it.
 */
export async function resultCommandsOn(env: TestTopics, admin: KafkaAdmin, partition: number, timeoutMs = 20_000): Promise<string[]> {
  const { end } = await admin.offsetsSince(env.topics.results, partition, 0);
  const read: string[] = [];
  await readRanges(env.kafka, [{ topic: env.topics.results, partition, start: 0n, end }], {
    groupPrefix: `${env.topics.results}.reader-test-`,
    record: async (_topic, _partition, record) => {
      const decoded = await env.serde.decode('results', record.value);
      if (decoded.ok) read.push(decoded.value.command_id);
    },
    signal: AbortSignal.timeout(timeoutMs),
  });
  return read;
}

/**
 * How a service's runtime started on `env`'s topics publishes, as the executors and the policy
 * service start it (their results in transactions where the topic is replicated): whether it chose
 * transactions, and whether results and orders go out in them.
 */
export async function servicePublishing(events: EventsConfig, env: TestTopics): Promise<[boolean, boolean, boolean]> {
  const runtime = await startEventRuntime({
    events,
    topics: env.topics,
    clientId: `gatehouse-executor-publishing-${Date.now()}`,
    logger,
    transactions: { roles: ['results'] },
  });
  try {
    return [
      runtime.transactional,
      runtime.publisher.inTransactions(env.topics.results),
      runtime.publisher.inTransactions(env.topics.execute),
    ];
  } finally {
    await runtime.stop();
  }
}
