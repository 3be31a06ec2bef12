import { randomUUID } from 'node:crypto';
import type { Admin, Kafka } from 'kafkajs';
import { deadLetterOf } from './dead-letter.js';
import type { DeadLetter } from './dead-letter.js';
import { CliError, ExitCode } from './exit-code.js';
import { CLI_RETRY } from './kafka-access.js';

export interface ReadOptions {
  /** Read only the newest this many records of each partition; all of them when absent. */
  readonly newest?: number;
  /** Bound on the whole read. */
  readonly timeoutMs: number;
  readonly onProgress?: (read: number, total: number) => void;
}

export interface ReadResult {
  /** In topic, partition, offset order. */
  readonly records: DeadLetter[];
  /** Asked-for topics that do not exist. */
  readonly missing: string[];
}

interface Range {
  readonly topic: string;
  readonly partition: number;
  readonly start: bigint;
  /** The high watermark when the read began: records from then on are left for the next read. */
  readonly end: bigint;
}

async function rangesOf(admin: Admin, topics: readonly string[], newest: number | undefined): Promise<Range[]> {
  const ranges: Range[] = [];
  for (const topic of topics) {
    for (const { partition, low, high } of await admin.fetchTopicOffsets(topic)) {
      const end = BigInt(high);
      const floor = BigInt(low);
      const wanted = newest === undefined ? floor : end - BigInt(newest);
      const start = wanted > floor ? wanted : floor;
      if (end > start) ranges.push({ topic, partition, start, end });
    }
  }
  return ranges;
}

const rangeKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

/**
 * Reads dead letters without committing anything: the offsets of every partition are fixed first
 * (admin API), then a consumer in a throwaway group (deleted afterwards) reads each partition from
 * its start up to that high watermark, seeking past older records when only the newest are wanted.
 */
export async function readDeadLetters(kafka: Kafka, topics: readonly string[], options: ReadOptions): Promise<ReadResult> {
  const admin = kafka.admin({ retry: CLI_RETRY });
  await admin.connect();
  const groupId = `gatehouse-cli-${randomUUID()}`;
  let joined = false;
  try {
    const existing = new Set(await admin.listTopics());
    const present = topics.filter((topic) => existing.has(topic));
    const missing = topics.filter((topic) => !existing.has(topic));
    const ranges = await rangesOf(admin, present, options.newest);
    const total = ranges.reduce((sum, r) => sum + Number(r.end - r.start), 0);
    if (total === 0) return { records: [], missing };

    const byPartition = new Map(ranges.map((r) => [rangeKey(r.topic, r.partition), r]));
    const open = new Set(byPartition.keys());
    const records: DeadLetter[] = [];
    // A seek can hand over again what the first fetch already delivered.
    const seen = new Set<string>();
    const consumer = kafka.consumer({ groupId, retry: CLI_RETRY, allowAutoTopicCreation: false });
    await consumer.connect();
    joined = true;
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(
            new CliError(
              ExitCode.unreachable,
              'DLQ_READ_TIMEOUT',
              `read ${records.length} of ${total} dead letters within ${options.timeoutMs} ms; the rest did not arrive`,
            ),
          );
        }, options.timeoutMs);
        const settle = (error?: unknown): void => {
          clearTimeout(timer);
          if (error === undefined) resolve();
          else reject(error instanceof Error ? error : new Error('the consumer failed', { cause: error }));
        };
        consumer.on(consumer.events.CRASH, (event) => settle(event.payload.error));
        const started = (async () => {
          await consumer.subscribe({ topics: [...new Set(ranges.map((r) => r.topic))], fromBeginning: true });
          await consumer.run({
            autoCommit: false,
            eachMessage: ({ topic, partition, message }) => {
              const key = rangeKey(topic, partition);
              const range = byPartition.get(key);
              const offset = BigInt(message.offset);
              if (range === undefined || offset < range.start || offset >= range.end || seen.has(`${key}@${message.offset}`))
                return Promise.resolve();
              seen.add(`${key}@${message.offset}`);
              records.push(deadLetterOf(topic, partition, message));
              options.onProgress?.(records.length, total);
              if (offset >= range.end - 1n) open.delete(key);
              if (open.size === 0) settle();
              return Promise.resolve();
            },
          });
          for (const range of ranges) consumer.seek({ topic: range.topic, partition: range.partition, offset: range.start.toString() });
        })();
        started.catch(settle);
      });
    } finally {
      await consumer.disconnect();
    }
    const order = (a: DeadLetter, b: DeadLetter): number =>
      a.dlqTopic === b.dlqTopic
        ? a.partition === b.partition
          ? Number(BigInt(a.offset) - BigInt(b.offset))
          : a.partition - b.partition
        : a.dlqTopic < b.dlqTopic
          ? -1
          : 1;
    return { records: records.sort(order), missing };
  } finally {
    // The group never committed an offset; remove it so reads leave nothing behind.
    if (joined) await admin.deleteGroups([groupId]).catch(() => undefined);
    await admin.disconnect();
  }
}
