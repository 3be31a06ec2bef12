import { EventsError } from './events-error.js';
import type { KafkaAdmin, PartitionOffsets } from './kafka-admin.js';
import { kafkaErrorCodes } from './kafka-errors.js';

/** How long a start waits for the topics it produces to and consumes from before it fails, naming them. */
const TOPICS_WAIT_MS = 30_000;
const POLL_MS = 100;

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

/** The topic's offsets when every partition's leader serves it now; undefined while it does not exist or is not served yet. */
async function servedOffsets(admin: KafkaAdmin, topic: string, listed: ReadonlySet<string>): Promise<PartitionOffsets[] | undefined> {
  // A topic the broker does not list yet (another process is still creating it) is waited for, never asked about:
  // the client answers a metadata request for it with an error of its own, not the broker's.
  if (!listed.has(topic)) return undefined;
  try {
    const offsets = await admin.topicOffsets(topic);
    return offsets.length > 0 ? offsets : undefined;
  } catch (error) {
    if (notServingYet(error)) return undefined;
    throw error;
  }
}

/**
 * Every named topic's offsets, once each exists and every partition's leader serves it. Asks again
 * (every 100 ms) while a topic is missing or not served yet; after `timeoutMs`, fails with
 * TOPICS_MISSING naming every topic still waited for. Any other error is thrown at once.
 */
async function awaitServed(admin: KafkaAdmin, topics: readonly string[], timeoutMs: number): Promise<Map<string, PartitionOffsets[]>> {
  const deadline = Date.now() + timeoutMs;
  const served = new Map<string, PartitionOffsets[]>();
  for (;;) {
    const listed = new Set(await admin.listTopics());
    const waiting = topics.filter((topic) => !served.has(topic));
    const found = await Promise.all(waiting.map((topic) => servedOffsets(admin, topic, listed)));
    waiting.forEach((topic, i) => {
      const offsets = found[i];
      if (offsets !== undefined) served.set(topic, offsets);
    });
    const missing = topics.filter((topic) => !served.has(topic));
    if (missing.length === 0) return served;
    if (Date.now() >= deadline) {
      throw new EventsError(
        'TOPICS_MISSING',
        `${missing.length === 1 ? 'topic' : 'topics'} ${missing.join(', ')} not there (or not served) after ${timeoutMs} ms: ` +
          'another service starting beside this one, or `npm run provision`, creates them',
      );
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** The offsets of every partition of a topic, once it exists and every partition's leader serves it (TOPICS_MISSING after `timeoutMs`). */
export async function topicOffsets(admin: KafkaAdmin, topic: string, timeoutMs = TOPICS_WAIT_MS): Promise<PartitionOffsets[]> {
  return (await awaitServed(admin, [topic], timeoutMs)).get(topic) ?? [];
}

/** Resolves once every topic named exists and every partition has a leader that serves it (TOPICS_MISSING, naming the rest, after `timeoutMs`). */
export async function awaitTopicsServed(admin: KafkaAdmin, topics: readonly string[], timeoutMs = TOPICS_WAIT_MS): Promise<void> {
  await awaitServed(admin, topics, timeoutMs);
}
