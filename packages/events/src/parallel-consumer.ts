import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@gatehouse/telemetry';
import { originOf } from './dead-letters.js';
import type { DeadLetters } from './dead-letters.js';
import type { ConsumedRecord, EventHandler } from './event-handler.js';
import type { KafkaConnection } from './kafka-client.js';
import { KeyScheduler } from './key-scheduler.js';
import { OffsetTracker } from './offset-tracker.js';
import { deadLetterUntrusted } from './record-trust.js';
import type { RecordTrust } from './record-trust.js';
import type { EventSerde } from './serde.js';
import type { TopicRole } from './topics.js';
import { openGroupLink } from './group-link.js';
import type { GroupLink } from './group-link.js';
import { untilSucceeds } from './retry.js';
import { readRecordOf } from './wire-record.js';
import type { ReadRecord, WireMessageOf } from './wire-record.js';

export interface ParallelConsumerOptions<R extends TopicRole> {
  readonly kafka: KafkaConnection;
  readonly serde: EventSerde;
  readonly role: R;
  readonly groupId: string;
  /** Must settle for every record; a rejection is retried with backoff until it succeeds or the consumer stops. */
  readonly handle: EventHandler<R>;
  readonly deadLetters: DeadLetters;
  readonly logger: Logger;
  /** For a signed topic: only records a trusted key of the right role signed reach `handle`; the rest go to the DLQ. */
  readonly trust?: RecordTrust;
  /** Records running at once across all keys (default 64). */
  readonly maxConcurrency?: number;
  /** Records of one key (the record key: a tenant) running at once (default 8). */
  readonly maxPerKey?: number;
  /** Records fetched and not finished before fetching pauses (default 2,000). */
  readonly maxBuffered?: number;
  /** How often finished offsets are committed (default 200 ms). */
  readonly commitIntervalMs?: number;
  readonly fromBeginning?: boolean;
  readonly sessionTimeoutMs?: number;
}

export interface ParallelConsumerStats {
  readonly buffered: number;
  readonly running: number;
  readonly assigned: readonly number[];
}

export interface RunningParallelConsumer {
  /** Settles when this member first receives its partition assignment. */
  readonly joined: Promise<void>;
  stats(): ParallelConsumerStats;
  /** Stops fetching, lets running records finish (bounded), commits what finished, and leaves the group. */
  stop(options?: { readonly drainTimeoutMs?: number }): Promise<void>;
}

/** What the steps of one member share: its partitions, their trackers, and whether it is stopping. */
interface MemberState {
  readonly topic: string;
  readonly log: Logger;
  readonly scheduler: KeyScheduler;
  readonly maxBuffered: number;
  readonly trackers: Map<number, OffsetTracker>;
  /** The partitions of the last assignment; none while the member (re)joins. */
  assigned: Set<number>;
  stopping: boolean;
  /** Fetching is paused until the buffer has room again. */
  full: boolean;
  /** Pauses or resumes fetching (set once the member has joined). */
  backpressure: (full: boolean) => void;
}

type Work = (tracker: OffsetTracker, partition: number, record: ReadRecord) => Promise<void>;

/**
 * A group member that works on many records of a partition at once. Fetching runs ahead of the
 * work (bounded by `maxBuffered`); records run in parallel across keys, in order within a key, and a
 * partition's offset is committed only up to its lowest unfinished record. A slow key therefore does
 * not hold back other keys on the same partition, and a crash loses nothing: the next owner starts
 * at the lowest unfinished record. Records that do not decode go to the DLQ.
 */
export async function startParallelConsumer<R extends TopicRole>(options: ParallelConsumerOptions<R>): Promise<RunningParallelConsumer> {
  const topic = options.serde.topics[options.role];
  const member: MemberState = {
    topic,
    log: options.logger.child({ topic, groupId: options.groupId }),
    scheduler: new KeyScheduler(options.maxConcurrency ?? 64, options.maxPerKey ?? 8),
    maxBuffered: options.maxBuffered ?? 2_000,
    trackers: new Map<number, OffsetTracker>(),
    assigned: new Set<number>(),
    stopping: false,
    full: false,
    backpressure: () => undefined,
  };
  const { scheduler } = member;
  const work = recordWorker(member, recordDecoder(options, member));
  const link = await openGroupLink({
    kafka: options.kafka,
    groupId: options.groupId,
    topic,
    log: member.log,
    ...(options.sessionTimeoutMs === undefined ? {} : { sessionTimeoutMs: options.sessionTimeoutMs }),
    start: (wire) => ({
      mode: wire.MessagesStreamModes.COMMITTED,
      fallbackMode: options.fromBeginning === true ? wire.MessagesStreamFallbackModes.EARLIEST : wire.MessagesStreamFallbackModes.LATEST,
    }),
    assigned: (partitions, joined) => {
      member.assigned = new Set(partitions);
      if (joined) forgetMovedPartitions(member);
    },
    message: (message) => take(member, work, message),
  });
  member.backpressure = (full) => link.backpressure(full);
  const commit = offsetCommitter(link, member);
  let committing = Promise.resolve();
  const timer = setInterval(() => {
    committing = committing.then(commit);
  }, options.commitIntervalMs ?? 200);

  return {
    joined: link.joined,
    stats: () => ({ buffered: scheduler.size, running: scheduler.active, assigned: [...member.assigned].sort((a, b) => a - b) }),
    stop: async ({ drainTimeoutMs = 10_000 } = {}) => {
      link.hold();
      await Promise.race([scheduler.idle(), sleep(drainTimeoutMs)]);
      clearInterval(timer);
      await committing;
      await commit();
      member.stopping = true;
      await link.close();
    },
  };
}

/**
 * After a join, forgets the trackers of partitions the group gave to another member: their records
 * fetched here and not yet begun are left to the new owner, which reads them from the committed
 * offset (a record begun here finishes, and may be handled there again, as after a crash). The
 * trackers of partitions this member keeps stay, across a failed consumer's rejoin too, so the
 * records it fetched and handled are not handled again when the stream reads them once more.
 */
function forgetMovedPartitions(member: MemberState): void {
  for (const partition of member.trackers.keys()) {
    if (!member.assigned.has(partition)) member.trackers.delete(partition);
  }
}

/** Hands a fetched record to the scheduler, pausing the stream while `maxBuffered` records are unfinished. */
function take(member: MemberState, work: Work, message: WireMessageOf): void {
  const { partition } = message;
  // Read before a rebalance moved its partition away (or while stopping): the next owner reads it
  // from the committed offset.
  if (member.stopping || !member.assigned.has(partition)) return;
  let tracker = member.trackers.get(partition);
  if (tracker === undefined) {
    tracker = new OffsetTracker();
    member.trackers.set(partition, tracker);
  }
  // After a rejoin the stream reads again from the committed offset: a record begun here before is skipped.
  if (tracker.begin(Number(message.offset))) {
    const owner = tracker;
    const record = readRecordOf(message);
    member.scheduler.submit(record.key === null ? '' : record.key.toString('utf8'), () => work(owner, partition, record));
  }
  if (member.scheduler.size >= member.maxBuffered && !member.full) {
    member.full = true;
    member.backpressure(true);
  }
}

/** Decodes a record and hands it on: undecodable or untrusted records go to the DLQ instead. */
function recordDecoder<R extends TopicRole>(options: ParallelConsumerOptions<R>, member: MemberState) {
  const { serde, role, handle, deadLetters } = options;
  const { topic, log } = member;
  return async (partition: number, message: ReadRecord): Promise<void> => {
    const origin = originOf(topic, partition, message);
    const decoded = await serde.decode(role, message.value);
    if (!decoded.ok) {
      await deadLetters.send(origin, decoded.reason, decoded.message);
      log.warn({ partition, offset: message.offset, reason: decoded.reason }, 'undecodable record sent to the DLQ');
      return;
    }
    if (await deadLetterUntrusted(role, decoded.value, origin, options.trust, deadLetters, log)) return;
    const record: ConsumedRecord = {
      topic,
      partition,
      offset: message.offset,
      key: message.key === null ? null : message.key.toString('utf8'),
      timestamp: message.timestamp,
      headers: message.headers,
      origin,
    };
    await handle(decoded.value, record);
  };
}

/**
 * Runs one record to success (retrying with backoff), marks it finished, and resumes a paused fetch.
 * A record of a partition that moved to another member before it began is not run here.
 */
function recordWorker(member: MemberState, decodeAndHandle: (partition: number, message: ReadRecord) => Promise<void>): Work {
  const { log, scheduler, maxBuffered } = member;
  return async (tracker, partition, record) => {
    const moved = (): boolean => member.trackers.get(partition) !== tracker;
    // Left unfinished when the consumer stops or the partition moves, the record is not committed
    // past and the next owner takes it again.
    const handled =
      !moved() &&
      (await untilSucceeds(() => decodeAndHandle(partition, record), {
        firstDelayMs: 100,
        stopped: () => member.stopping || moved(),
        failed: (error) => log.error({ err: error, partition, offset: record.offset }, 'record failed; retrying'),
      }));
    if (handled) tracker.finish(Number(record.offset));
    if (member.full && scheduler.size < maxBuffered) {
      member.full = false;
      member.backpressure(false);
    }
  };
}

/** Commits each assigned partition up to its lowest unfinished record. */
function offsetCommitter(link: GroupLink, member: MemberState): () => Promise<void> {
  const { topic, log, trackers } = member;
  return async (): Promise<void> => {
    const consumer = link.current();
    if (consumer === undefined) return;
    const offsets: { topic: string; partition: number; offset: bigint; leaderEpoch: number }[] = [];
    const marks: [OffsetTracker, number][] = [];
    for (const [partition, tracker] of trackers) {
      if (!member.assigned.has(partition)) continue;
      const next = tracker.committable();
      if (next === undefined) continue;
      // No leader epoch (-1): the broker then does not fence the commit by epoch, as kafkajs commits.
      offsets.push({ topic, partition, offset: BigInt(next), leaderEpoch: -1 });
      marks.push([tracker, next]);
    }
    if (offsets.length === 0) return;
    try {
      await consumer.commit({ offsets });
      for (const [tracker, next] of marks) tracker.markCommitted(next);
    } catch (error) {
      // A rebalance in progress refuses commits; the next tick (or the next owner) catches up.
      log.warn({ err: error }, 'offset commit refused; will retry');
    }
  };
}
