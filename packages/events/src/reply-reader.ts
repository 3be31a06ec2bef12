import { randomUUID } from 'node:crypto';
import type { Logger } from '@gatehouse/telemetry';
import { originOf } from './dead-letters.js';
import type { DeadLetters } from './dead-letters.js';
import type { ToolResult } from './event-types.js';
import { openGroupLink } from './group-link.js';
import { KafkaAdmin } from './kafka-admin.js';
import type { KafkaConnection } from './kafka-client.js';
import { deadLetterUntrusted } from './record-trust.js';
import type { RecordTrust } from './record-trust.js';
import type { EventSerde } from './serde.js';
import { topicOffsets } from './topic-readiness.js';
import type { PartitionOffsets } from './kafka-admin.js';
import { untilSucceeds } from './retry.js';
import { readRecordOf } from './wire-record.js';
import type { WireMessageOf } from './wire-record.js';

/**
 * The consumer groups of agent-runtime instances, named after the results topic they read (so
 * deployments sharing a cluster under topic prefixes do not count each other):
 * `<results topic>.reader-r<partition>-<uuid>`.
 */
export function replyGroupPrefix(resultsTopic: string): string {
  return `${resultsTopic}.reader-r`;
}

export interface ReplyReaderOptions {
  readonly kafka: KafkaConnection;
  readonly serde: EventSerde;
  /** Where undecodable results go (`<results>.dlq`), byte for byte. */
  readonly deadLetters: DeadLetters;
  readonly logger: Logger;
  /** The results partition to read; default: the one the fewest live instances read now. */
  readonly partition?: number;
  /**
   * The offset to start at (with `partition`): where another instance's reader stood when it sent a
   * command whose answer this one now waits for. Default: the partition's end before joining.
   */
  readonly from?: bigint;
  /** Only answers a trusted key of a service that may publish results signed are handed on; the rest go to the DLQ. */
  readonly trust: RecordTrust;
  readonly handle: (result: ToolResult) => void;
}

export interface ReplyReader {
  /** The partition this instance reads; its commands carry it as their reply partition. */
  readonly partition: number;
  /**
   * The offset of the next record this reader will hand on: every answer to a command sent from now
   * on lies at or after it.
   */
  readonly position: bigint;
  /** Records fetched from the results topic so far (answers to this instance and to any that share its partition). */
  readonly recordsRead: number;
  /** Records that did not decode and went to the results DLQ. */
  readonly deadLettered: number;
  /** Records no trusted key vouched for, sent to the results DLQ and never handed on. */
  readonly untrusted: number;
  stop(): Promise<void>;
}

/**
 * Reads one partition of the results topic for one agent-runtime instance: the answers to its own
 * commands (which carry the partition as their reply partition), not every tenant's. It is the only
 * member of a consumer group of its own, reading that single partition; it commits
 * nothing, starts at the partition's end as it was before it joined and, whatever happens to its
 * consumer, goes on after the last record it handled, so every answer published after it started
 * is seen. A record that does not decode is dead-lettered and counted.
 */
export async function startReplyReader(options: ReplyReaderOptions): Promise<ReplyReader> {
  const topic = options.serde.topics.results;
  const { partition, end } = await choosePartition(options, topic);
  const log = options.logger.child({ replyPartition: partition });
  const counts = { recordsRead: 0, deadLettered: 0, untrusted: 0 };
  // Where reading goes on: the partition's end before joining, then past the last record handled.
  // Nothing is committed: a reader that joins afresh (after its consumer failed) starts here again.
  let next = options.from ?? BigInt(end.offset);
  let stopped = false;
  const queue: WireMessageOf[] = [];
  let draining: Promise<void> | undefined;

  const handleOne = async (message: WireMessageOf): Promise<void> => {
    counts.recordsRead += 1;
    // Another partition's (never asked for), or read again after the reader joined afresh.
    if (message.partition !== partition || message.offset < next) return;
    const record = readRecordOf(message);
    const decoded = await options.serde.decode('results', record.value);
    const dead = originOf(topic, message.partition, record);
    if (decoded.ok) {
      // A forged answer never reaches the agent: it could say "ok" for a write that never ran.
      if (await deadLetterUntrusted('results', decoded.value, dead, options.trust, options.deadLetters, log)) counts.untrusted += 1;
      else options.handle(decoded.value);
    } else {
      await options.deadLetters.send(dead, decoded.reason, decoded.message);
      counts.deadLettered += 1;
      log.warn({ partition: message.partition, offset: record.offset, reason: decoded.reason }, 'undecodable result sent to the DLQ');
    }
    next = message.offset + 1n;
  };
  const drain = async (): Promise<void> => {
    for (let message = queue.shift(); message !== undefined && !stopped; message = queue.shift()) {
      await untilHandled(
        () => handleOne(message),
        log,
        () => stopped,
      );
      if (queue.length <= QUEUE_LOW) link.backpressure(false);
    }
    draining = undefined;
  };

  const link = await openGroupLink({
    kafka: options.kafka,
    groupId: `${replyGroupPrefix(topic)}${partition}-${randomUUID()}`,
    topic,
    log,
    onlyPartition: partition,
    start: (wire) => ({ mode: wire.MessagesStreamModes.MANUAL, offsets: [{ topic, partition, offset: next }] }),
    assigned: () => undefined,
    message: (message) => {
      queue.push(message);
      if (queue.length >= QUEUE_HIGH) link.backpressure(true);
      draining ??= drain();
    },
  });
  return {
    partition,
    get position() {
      return next;
    },
    get recordsRead() {
      return counts.recordsRead;
    },
    get deadLettered() {
      return counts.deadLettered;
    },
    get untrusted() {
      return counts.untrusted;
    },
    stop: async () => {
      stopped = true;
      link.hold();
      await draining;
      await link.close();
    },
  };
}

/** Records read ahead of the one being handled: fetching pauses above the high mark, resumes at the low one. */
const QUEUE_HIGH = 1_024;
const QUEUE_LOW = 128;

/**
 * Runs `handle` until it succeeds or the reader stops: a record that failed (the registry away, the
 * DLQ unwritable) is handled again, never skipped.
 */
async function untilHandled(handle: () => Promise<void>, log: Logger, stopped: () => boolean): Promise<void> {
  if (stopped()) return;
  await untilSucceeds(handle, {
    firstDelayMs: 100,
    stopped,
    // The error's kind only: a consumer's error message can quote a record it was handling.
    failed: (error) => log.error({ err: { name: (error as Error).name } }, 'a result could not be handled; trying again'),
  });
}

/** The results partition to read (the configured one, or the least read) and its end before joining. */
async function choosePartition(
  options: ReplyReaderOptions,
  topic: string,
): Promise<{ readonly partition: number; readonly end: PartitionOffsets }> {
  const admin = await KafkaAdmin.connect(options.kafka);
  let ends: Awaited<ReturnType<typeof topicOffsets>>;
  let partition: number;
  try {
    ends = await topicOffsets(admin, topic);
    partition =
      options.partition ??
      // Choosing well is a saving, not a condition: when the groups cannot be read, any partition serves.
      (await leastReadPartition(admin, topic, ends.length).catch((error: unknown) => {
        options.logger.warn(
          { err: { message: error instanceof Error ? error.message : String(error) } },
          'could not count the readers of each results partition; taking one at random',
        );
        return Math.floor(Math.random() * ends.length);
      }));
  } finally {
    await admin.close();
  }
  const end = ends.find((e) => e.partition === partition);
  if (end === undefined) throw new RangeError(`the results topic ${topic} has no partition ${partition} (it has ${ends.length})`);
  return { partition, end };
}

/**
 * The partition the fewest live agent-runtime instances read, from the ids of their groups that
 * have a member (the group of an instance that stopped lingers empty for a while). Ties are broken
 * at random, so instances that start at the same moment rarely pick the same one; when they do,
 * both only read more.
 */
async function leastReadPartition(admin: KafkaAdmin, resultsTopic: string, partitions: number): Promise<number> {
  const readers = new Array<number>(partitions).fill(0);
  const prefix = replyGroupPrefix(resultsTopic);
  const candidates = (await admin.listGroups()).filter((id) => id.startsWith(prefix));
  const members = candidates.length === 0 ? new Map<string, number>() : await admin.groupMembers(candidates);
  const live = [...members].flatMap(([groupId, count]) => (count > 0 ? [{ groupId }] : []));
  for (const { groupId } of live) {
    const match = /^(\d{1,5})-/.exec(groupId.slice(prefix.length));
    const index = match === null ? -1 : Number(match[1]);
    if (index >= 0 && index < partitions) readers[index] = (readers[index] ?? 0) + 1;
  }
  const fewest = Math.min(...readers);
  const least = readers.flatMap((count, index) => (count === fewest ? [index] : []));
  return least[Math.floor(Math.random() * least.length)] ?? 0;
}
