import { KafkaAdmin, readRanges } from '@gatehouse/events';
import type { KafkaConnection, PartitionRange } from '@gatehouse/events';
import { deadLetterOf } from './dead-letter.js';
import type { DeadLetter } from './dead-letter.js';
import { CliError, ExitCode } from './exit-code.js';

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

/** Each partition's records to read: from its start (or its newest `newest`) to its end when the read began. */
async function rangesOf(admin: KafkaAdmin, topics: readonly string[], newest: number | undefined): Promise<PartitionRange[]> {
  const ranges: PartitionRange[] = [];
  for (const topic of topics) {
    for (const { partition, low, high } of await admin.topicOffsets(topic)) {
      // Records from the end on are left for the next read.
      const end = BigInt(high);
      const floor = BigInt(low);
      const wanted = newest === undefined ? floor : end - BigInt(newest);
      ranges.push({ topic, partition, start: wanted > floor ? wanted : floor, end });
    }
  }
  return ranges.filter((r) => r.end > r.start);
}

const order = (a: DeadLetter, b: DeadLetter): number =>
  a.dlqTopic === b.dlqTopic
    ? a.partition === b.partition
      ? Number(BigInt(a.offset) - BigInt(b.offset))
      : a.partition - b.partition
    : a.dlqTopic < b.dlqTopic
      ? -1
      : 1;

/**
 * Reads dead letters without committing anything: the offsets of every partition are fixed first,
 * then each partition is read from its start up to that end by a consumer of a throwaway group.
 */
export async function readDeadLetters(kafka: KafkaConnection, topics: readonly string[], options: ReadOptions): Promise<ReadResult> {
  const admin = await KafkaAdmin.connect(kafka);
  let ranges: PartitionRange[];
  let missing: string[];
  try {
    const existing = new Set(await admin.listTopics());
    missing = topics.filter((topic) => !existing.has(topic));
    ranges = await rangesOf(
      admin,
      topics.filter((topic) => existing.has(topic)),
      options.newest,
    );
  } finally {
    await admin.close().catch(() => undefined);
  }
  const total = ranges.reduce((sum, r) => sum + Number(r.end - r.start), 0);
  const records: DeadLetter[] = [];
  const timeout = new AbortController();
  const timer = setTimeout(() => {
    const message = `read ${records.length} of ${total} dead letters within ${options.timeoutMs} ms; the rest did not arrive`;
    timeout.abort(new CliError(ExitCode.unreachable, 'DLQ_READ_TIMEOUT', message));
  }, options.timeoutMs);
  try {
    await readRanges(kafka, ranges, {
      groupPrefix: 'gatehouse-cli-',
      signal: timeout.signal,
      record: (topic, partition, record) => {
        records.push(deadLetterOf(topic, partition, record));
        options.onProgress?.(records.length, total);
      },
    });
  } finally {
    clearTimeout(timer);
  }
  return { records: records.sort(order), missing };
}
