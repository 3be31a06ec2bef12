import { randomUUID } from 'node:crypto';
import { KafkaAdmin } from './kafka-admin.js';
import type { KafkaConnection } from './kafka-client.js';
import { fetchedPosition, trackFetchedPositions } from './read-committed.js';
import { wireClient } from './wire-client.js';
import { readRecordOf } from './wire-record.js';
import type { ReadRecord } from './wire-record.js';

/** Records `start` (inclusive) to `end` (exclusive) of one partition. */
export interface PartitionRange {
  readonly topic: string;
  readonly partition: number;
  readonly start: bigint;
  readonly end: bigint;
}

export interface RangeReadOptions {
  /** The throwaway consumer group's name, before a random suffix. */
  readonly groupPrefix: string;
  /** Called once per record of a range, in offset order within its partition; awaited before the next. */
  readonly record: (topic: string, partition: number, record: ReadRecord) => void | Promise<void>;
  /** Stops the read: it then rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

const partitionKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

/**
 * Reads the records of each range once, committing nothing: a consumer in a group of its own (a
 * lone member, given every partition of its topics) starts each partition at its range's start, and
 * the read ends once every range is read to its end. The group is deleted afterwards, so a read
 * leaves nothing behind. For operators' tools (dead letters, traces), not for services.
 */
export async function readRanges(kafka: KafkaConnection, ranges: readonly PartitionRange[], options: RangeReadOptions): Promise<void> {
  const wanted = new Map(ranges.filter((r) => r.end > r.start).map((r) => [partitionKey(r.topic, r.partition), r]));
  if (wanted.size === 0) return;
  options.signal?.throwIfAborted();
  const wire = await wireClient();
  const groupId = `${options.groupPrefix}${randomUUID()}`;
  const consumer = new wire.Consumer({ ...kafka.wireOptions(), groupId, autocommit: false, maxWaitTime: 500 });
  trackFetchedPositions(consumer);
  const abort = new AbortController();
  const stop = (): void => abort.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', stop, { once: true });
  // A consumer that fails (heartbeats refused, its broker gone) ends the read with its error.
  consumer.on('error', (error: Error) => abort.abort(error));
  try {
    const topics = [...new Set([...wanted.values()].map((r) => r.topic))];
    const topicIds = new Map([...(await consumer.metadata({ topics })).topics].map(([name, topic]) => [name, topic.id]));
    const stream = await consumer.consume({
      topics,
      mode: wire.MessagesStreamModes.MANUAL,
      offsets: [...wanted.values()].map((r) => ({ topic: r.topic, partition: r.partition, offset: r.start })),
    });
    abort.signal.addEventListener('abort', () => stream.destroy(abort.signal.reason as Error), { once: true });
    // A range may end with records never delivered: transaction markers, records of aborted
    // transactions. It is read once the fetches went past its end and every record they let
    // through below it has arrived, or once a record past its end has.
    const received = new Map<string, bigint>();
    const dropFinished = (): void => {
      for (const [key, range] of wanted) {
        const fetched = fetchedPosition(consumer, topicIds.get(range.topic) ?? '', range.partition);
        if (fetched === undefined || fetched.next < range.end) continue;
        const lastWanted = fetched.lastDelivered < range.end - 1n ? fetched.lastDelivered : range.end - 1n;
        if (lastWanted < range.start || (received.get(key) ?? -1n) >= lastWanted) wanted.delete(key);
      }
    };
    // The stream pushes a fetch's records in the same turn as it says it fetched: by the next turn
    // they are in its buffer, and the check above sees them as not yet received.
    let fetched: () => void = () => undefined;
    stream.on('fetch', () => setImmediate(() => fetched()));
    const messages = stream[Symbol.asyncIterator]();
    let pending: ReturnType<typeof messages.next> | undefined;
    while (wanted.size > 0) {
      pending ??= messages.next();
      const woken = new Promise<'fetched'>((resolve) => (fetched = () => resolve('fetched')));
      const step = await Promise.race([pending, woken]);
      if (step === 'fetched') {
        dropFinished();
        continue;
      }
      pending = undefined;
      if (step.done === true) break;
      const message = step.value;
      const key = partitionKey(message.topic, message.partition);
      const range = wanted.get(key);
      if (range === undefined || message.offset < range.start) continue;
      if (message.offset >= range.end) {
        // A partition's records come in order: one past the end says every record below it arrived,
        // whatever the range's last offsets hold (a transaction's marker, as they so often do).
        wanted.delete(key);
        continue;
      }
      await options.record(message.topic, message.partition, readRecordOf(message));
      received.set(key, message.offset);
      if (message.offset >= range.end - 1n) wanted.delete(key);
      dropFinished();
    }
    // A read still waiting when the ranges are done ends with the stream.
    pending?.catch(() => undefined);
    abort.signal.throwIfAborted();
    if (wanted.size > 0) throw new Error(`the stream ended with ${wanted.size} partitions not read to their ends`);
    await stream.close().catch(() => undefined);
  } finally {
    options.signal?.removeEventListener('abort', stop);
    await consumer.close(true).catch(() => undefined);
    await deleteGroup(kafka, groupId);
  }
}

/** Best effort: the group committed nothing, and one left behind expires with the broker's retention. */
async function deleteGroup(kafka: KafkaConnection, groupId: string): Promise<void> {
  const admin = await KafkaAdmin.connect(kafka).catch(() => undefined);
  await admin?.deleteGroups([groupId]).catch(() => undefined);
  await admin?.close().catch(() => undefined);
}
