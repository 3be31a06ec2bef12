import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import type { Logger } from '@gatehouse/telemetry';
import type { ConsumedRecord, EventHandler } from './consumer.js';
import { originOf } from './dead-letters.js';
import type { DeadLetters } from './dead-letters.js';
import { KeyScheduler } from './key-scheduler.js';
import { OffsetTracker } from './offset-tracker.js';
import { deadLetterUntrusted } from './record-trust.js';
import type { RecordTrust } from './record-trust.js';
import type { EventSerde } from './serde.js';
import type { TopicRole } from './topics.js';

export interface ParallelConsumerOptions<R extends TopicRole> {
  readonly kafka: Kafka;
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
  readonly consumer: Consumer;
  /** Settles when this member first receives its partition assignment. */
  readonly joined: Promise<void>;
  stats(): ParallelConsumerStats;
  /** Stops fetching, lets running records finish (bounded), commits what finished, and leaves the group. */
  stop(options?: { readonly drainTimeoutMs?: number }): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What the steps of one member share: its partitions, their trackers, and whether it is stopping. */
interface MemberState {
  readonly topic: string;
  readonly log: Logger;
  readonly scheduler: KeyScheduler;
  readonly maxBuffered: number;
  readonly trackers: Map<number, OffsetTracker>;
  /** The partitions of the last assignment. */
  assigned: Set<number>;
  stopping: boolean;
  /** Wakes a batch that waits for the buffer to have room. */
  capacityWaiter: (() => void) | undefined;
}

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
    capacityWaiter: undefined,
  };
  const { scheduler } = member;

  const consumer = groupConsumer(options);
  const joined = trackAssignment(consumer, member);
  const work = recordWorker(member, recordDecoder(options, member));
  const commit = offsetCommitter(consumer, member);
  let committing = Promise.resolve();
  const timer = setInterval(() => {
    committing = committing.then(commit);
  }, options.commitIntervalMs ?? 200);

  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: options.fromBeginning ?? false });
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    eachBatch: batchHandler(member, work),
  });

  return {
    consumer,
    joined,
    stats: () => ({ buffered: scheduler.size, running: scheduler.active, assigned: [...member.assigned].sort((a, b) => a - b) }),
    stop: async ({ drainTimeoutMs = 10_000 } = {}) => {
      try {
        consumer.pause([{ topic }]);
      } catch {
        // A consumer that crashed and is not running has nothing to pause; stopping goes on.
      }
      await Promise.race([scheduler.idle(), sleep(drainTimeoutMs)]);
      clearInterval(timer);
      await committing;
      await commit();
      member.stopping = true;
      member.capacityWaiter?.();
      await consumer.disconnect();
    },
  };
}

function groupConsumer<R extends TopicRole>(options: ParallelConsumerOptions<R>): Consumer {
  return options.kafka.consumer({
    groupId: options.groupId,
    allowAutoTopicCreation: false,
    sessionTimeout: options.sessionTimeoutMs ?? 30_000,
    // A member that died mid-rebalance is waited for this long; ours rejoin at once (batches return quickly).
    rebalanceTimeout: (options.sessionTimeoutMs ?? 30_000) + 5_000,
    heartbeatInterval: Math.min(3_000, Math.floor((options.sessionTimeoutMs ?? 30_000) / 3)),
  });
}

/** Keeps `assigned` to the member's latest assignment; settles when it first joins. */
function trackAssignment(consumer: Consumer, member: MemberState): Promise<void> {
  const { topic, trackers } = member;
  let onJoin: () => void = () => undefined;
  const joined = new Promise<void>((resolve) => (onJoin = resolve));
  consumer.on(consumer.events.GROUP_JOIN, (event) => {
    member.assigned = new Set(event.payload.memberAssignment[topic] ?? []);
    for (const [partition, tracker] of trackers) {
      if (!member.assigned.has(partition) && tracker.unfinished === 0) trackers.delete(partition);
    }
    onJoin();
  });
  return joined;
}

/** Decodes a record and hands it on: undecodable or untrusted records go to the DLQ instead. */
function recordDecoder<R extends TopicRole>(options: ParallelConsumerOptions<R>, member: MemberState) {
  const { serde, role, handle, deadLetters } = options;
  const { topic, log } = member;
  return async (partition: number, message: KafkaMessage): Promise<void> => {
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

/** Runs one record to success (retrying with backoff), marks it finished, and wakes a waiting fetch. */
function recordWorker(member: MemberState, decodeAndHandle: (partition: number, message: KafkaMessage) => Promise<void>) {
  const { log, scheduler, maxBuffered } = member;
  return async (tracker: OffsetTracker, partition: number, message: KafkaMessage): Promise<void> => {
    for (let backoff = 100; ; backoff = Math.min(backoff * 2, 5_000)) {
      try {
        await decodeAndHandle(partition, message);
        tracker.finish(Number(message.offset));
        break;
      } catch (error) {
        // Left unfinished, the record is not committed past and the next owner takes it again.
        if (member.stopping) return;
        log.error({ err: error, partition, offset: message.offset }, 'record failed; retrying');
        await sleep(backoff);
      }
    }
    if (scheduler.size < maxBuffered && member.capacityWaiter !== undefined) {
      const wake = member.capacityWaiter;
      member.capacityWaiter = undefined;
      wake();
    }
  };
}

/** Commits each assigned partition up to its lowest unfinished record; forgets finished partitions no longer assigned. */
function offsetCommitter(consumer: Consumer, member: MemberState): () => Promise<void> {
  const { topic, log, trackers } = member;
  return async (): Promise<void> => {
    const offsets: { topic: string; partition: number; offset: string }[] = [];
    const marks: [OffsetTracker, number][] = [];
    for (const [partition, tracker] of trackers) {
      if (!member.assigned.has(partition)) {
        if (tracker.unfinished === 0) trackers.delete(partition);
        continue;
      }
      const next = tracker.committable();
      if (next === undefined) continue;
      offsets.push({ topic, partition, offset: String(next) });
      marks.push([tracker, next]);
    }
    if (offsets.length === 0) return;
    try {
      await consumer.commitOffsets(offsets);
      for (const [tracker, next] of marks) tracker.markCommitted(next);
    } catch (error) {
      // A rebalance in progress refuses commits; the next tick (or the next owner) catches up.
      log.warn({ err: error }, 'offset commit refused; will retry');
    }
  };
}

/** Hands a fetched batch's records to the scheduler, pausing while `maxBuffered` records are unfinished. */
function batchHandler(member: MemberState, work: (tracker: OffsetTracker, partition: number, message: KafkaMessage) => Promise<void>) {
  const { trackers, scheduler, maxBuffered } = member;
  return async (payload: EachBatchPayload): Promise<void> => {
    const { batch } = payload;
    let tracker = trackers.get(batch.partition);
    if (tracker === undefined) {
      tracker = new OffsetTracker();
      trackers.set(batch.partition, tracker);
    }
    for (const message of batch.messages) {
      if (!payload.isRunning() || payload.isStale() || member.stopping) break;
      while (scheduler.size >= maxBuffered && !member.stopping) {
        await Promise.race([new Promise<void>((resolve) => (member.capacityWaiter = resolve)), sleep(1_000)]);
        await payload.heartbeat();
      }
      if (member.stopping) break;
      if (tracker.begin(Number(message.offset))) {
        const key = message.key === null ? '' : message.key.toString('utf8');
        const owner = tracker;
        scheduler.submit(key, () => work(owner, batch.partition, message));
      }
      // Advances the fetch position only; what is committed comes from the tracker.
      payload.resolveOffset(message.offset);
    }
    await payload.heartbeat();
  };
}
