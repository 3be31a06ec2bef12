import { readRanges } from '@gatehouse/events';
import type { KafkaAdmin } from '@gatehouse/events';
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
