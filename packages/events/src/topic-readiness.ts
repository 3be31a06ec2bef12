import type { KafkaAdmin, PartitionOffsets } from './kafka-admin.js';
import { kafkaErrorCodes } from './kafka-errors.js';

/**
 * Errors a partition answers while its leader is not serving it yet. Right after a topic is
 * created (and for a moment after a broker restart) the controller has named a leader that has
 * not taken the partition over yet: an offset lookup still answers NOT_LEADER_OR_FOLLOWER.
 */
const NOT_SERVING_YET = new Set([
  'UNKNOWN_TOPIC_OR_PARTITION',
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_FOR_PARTITION',
  'NOT_LEADER_OR_FOLLOWER',
]);

const notServingYet = (error: unknown): boolean => kafkaErrorCodes(error).some((code) => NOT_SERVING_YET.has(code));

/**
 * The offsets of every partition of a topic, once every partition's leader serves it. Asks again
 * (every 100 ms, until `timeoutMs`) while a partition answers that its leader is not ready, or the
 * topic has no partitions yet; any other error, or a leader still missing at the deadline, is thrown.
 */
export async function topicOffsets(admin: KafkaAdmin, topic: string, timeoutMs = 30_000): Promise<PartitionOffsets[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const offsets = await admin.topicOffsets(topic);
      if (offsets.length > 0) return offsets;
      if (Date.now() >= deadline) throw new Error(`topic ${topic} has no partitions served after ${timeoutMs} ms`);
    } catch (error) {
      if (!notServingYet(error) || Date.now() >= deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Resolves once every partition of every topic named has a leader that serves it. */
export async function awaitTopicsServed(admin: KafkaAdmin, topics: readonly string[], timeoutMs = 30_000): Promise<void> {
  await Promise.all(topics.map((topic) => topicOffsets(admin, topic, timeoutMs)));
}
