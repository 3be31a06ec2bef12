import { randomUUID } from 'node:crypto';
import { KafkaAdmin } from './kafka-admin.js';
import type { KafkaConnection } from './kafka-client.js';
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
  const abort = new AbortController();
  const stop = (): void => abort.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', stop, { once: true });
  // A consumer that fails (heartbeats refused, its broker gone) ends the read with its error.
  consumer.on('error', (error: Error) => abort.abort(error));
  try {
    const stream = await consumer.consume({
      topics: [...new Set([...wanted.values()].map((r) => r.topic))],
      mode: wire.MessagesStreamModes.MANUAL,
      offsets: [...wanted.values()].map((r) => ({ topic: r.topic, partition: r.partition, offset: r.start })),
    });
    abort.signal.addEventListener('abort', () => stream.destroy(abort.signal.reason as Error), { once: true });
    for await (const message of stream) {
      const key = partitionKey(message.topic, message.partition);
      const range = wanted.get(key);
      if (range === undefined || message.offset < range.start || message.offset >= range.end) continue;
      await options.record(message.topic, message.partition, readRecordOf(message));
      if (message.offset >= range.end - 1n) wanted.delete(key);
      if (wanted.size === 0) break;
    }
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
