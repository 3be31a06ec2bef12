import type { Admin } from 'kafkajs';

/**
 * Errors a partition answers while its leader is not serving it yet. Right after a topic is
 * created (and for a moment after a broker restart) the controller has named a leader that has
 * not taken the partition over yet: `createTopics({ waitForLeaders })` has returned, but an offset
 * lookup still answers NOT_LEADER_FOR_PARTITION, and kafkajs' admin does not retry that.
 */
const NOT_SERVING_YET = new Set([
  'UNKNOWN_TOPIC_OR_PARTITION',
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_FOR_PARTITION',
  'NOT_LEADER_OR_FOLLOWER',
]);

export interface PartitionOffsets {
  readonly partition: number;
  readonly offset: string;
  readonly high: string;
  readonly low: string;
}

function notServingYet(error: unknown): boolean {
  const type = (error as { type?: unknown } | null)?.type;
  if (typeof type === 'string' && NOT_SERVING_YET.has(type)) return true;
  // kafkajs wraps a failed retry loop; the cause carries the broker's answer.
  const cause = (error as { originalError?: unknown; cause?: unknown } | null) ?? {};
  return (
    (cause.originalError !== undefined && notServingYet(cause.originalError)) || (cause.cause !== undefined && notServingYet(cause.cause))
  );
}

/**
 * The offsets of every partition of a topic, once every partition's leader serves it. Asks again
 * (every 100 ms, until `timeoutMs`) while a partition answers that its leader is not ready; any
 * other error, or a leader still missing at the deadline, is thrown.
 */
export async function topicOffsets(admin: Admin, topic: string, timeoutMs = 30_000): Promise<PartitionOffsets[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await admin.fetchTopicOffsets(topic);
    } catch (error) {
      if (!notServingYet(error) || Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Resolves once every partition of every topic named has a leader that serves it. */
export async function awaitTopicsServed(admin: Admin, topics: readonly string[], timeoutMs = 30_000): Promise<void> {
  await Promise.all(topics.map((topic) => topicOffsets(admin, topic, timeoutMs)));
}
