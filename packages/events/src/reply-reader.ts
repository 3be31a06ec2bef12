import { randomUUID } from 'node:crypto';
import { AssignerProtocol } from 'kafkajs';
import type { Admin, Consumer, Kafka, PartitionAssigner } from 'kafkajs';
import type { Logger } from '@gatehouse/telemetry';
import { originOf } from './dead-letters.js';
import type { DeadLetters } from './dead-letters.js';
import type { ToolResult } from './event-types.js';
import { deadLetterUntrusted } from './record-trust.js';
import type { RecordTrust } from './record-trust.js';
import type { EventSerde } from './serde.js';
import { topicOffsets } from './topic-readiness.js';
import type { PartitionOffsets } from './topic-readiness.js';

/**
 * The consumer groups of agent-runtime instances, named after the results topic they read (so
 * deployments sharing a cluster under topic prefixes do not count each other):
 * `<results topic>.reader-r<partition>-<uuid>`.
 */
export function replyGroupPrefix(resultsTopic: string): string {
  return `${resultsTopic}.reader-r`;
}

export interface ReplyReaderOptions {
  readonly kafka: Kafka;
  readonly serde: EventSerde;
  /** Where undecodable results go (`<results>.dlq`), byte for byte. */
  readonly deadLetters: DeadLetters;
  readonly logger: Logger;
  /** The results partition to read; default: the one the fewest live instances read now. */
  readonly partition?: number;
  /** Only answers a trusted key of a service that may publish results signed are handed on; the rest go to the DLQ. */
  readonly trust: RecordTrust;
  readonly handle: (result: ToolResult) => void;
}

export interface ReplyReader {
  /** The partition this instance reads; its commands carry it as their reply partition. */
  readonly partition: number;
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
 * member of a consumer group of its own whose assignor hands it that single partition; it commits
 * nothing, starts at the partition's end as it was before it joined and, after a rejoin, goes on
 * from the last record it read, so every answer published after it started is seen. A record that does not decode is dead-lettered and counted.
 */
export async function startReplyReader(options: ReplyReaderOptions): Promise<ReplyReader> {
  const topic = options.serde.topics.results;
  const { partition, end } = await choosePartition(options, topic);

  const groupId = `${replyGroupPrefix(topic)}${partition}-${randomUUID()}`;
  const log = options.logger.child({ replyPartition: partition });
  const consumer: Consumer = options.kafka.consumer({
    groupId,
    allowAutoTopicCreation: false,
    partitionAssigners: [onePartition(partition)],
  });
  let recordsRead = 0;
  let deadLettered = 0;
  let untrusted = 0;
  // Where reading goes on: the partition's end before joining, then past the last record read.
  // Nothing is committed, so after every (re)join — a broker restart makes one — the reader seeks
  // here itself; otherwise it would resume at the partition's end and miss the answers published
  // while it was away.
  let next = end.offset;
  let soughtBack: string | undefined;
  let onJoin: () => void = () => undefined;
  let onCrash: (error: Error) => void = () => undefined;
  const joined = new Promise<void>((resolve, reject) => {
    onJoin = resolve;
    onCrash = reject;
  });
  consumer.on(consumer.events.GROUP_JOIN, () => {
    consumer.seek({ topic, partition, offset: next });
    onJoin();
  });
  // A reader that stops for good stops answering every call of this instance: say so loudly, and
  // fail the start rather than wait forever for a join that will not come.
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (payload.restart) return;
    // The error's kind only: a consumer's error message can quote a record it was handling.
    const { name, type } = payload.error as Error & { type?: unknown };
    log.error(
      { err: { name, type: typeof type === 'string' ? type : undefined } },
      'the reader of the results topic stopped; this instance gets no more answers',
    );
    onCrash(payload.error);
  });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: false });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition: from, message }) => {
        recordsRead += 1;
        const offset = BigInt(message.offset);
        if (offset > BigInt(next) && soughtBack !== next) {
          // Records before this one were skipped (a fetch that ran before the seek took effect):
          // go back for them once; what comes twice is answered once.
          soughtBack = next;
          consumer.seek({ topic, partition, offset: next });
        }
        const decoded = await options.serde.decode('results', message.value);
        const dead = originOf(topic, from, message);
        if (decoded.ok) {
          // A forged answer never reaches the agent: it could say "ok" for a write that never ran.
          if (await deadLetterUntrusted('results', decoded.value, dead, options.trust, options.deadLetters, log)) untrusted += 1;
          else options.handle(decoded.value);
        } else {
          await options.deadLetters.send(dead, decoded.reason, decoded.message);
          deadLettered += 1;
          log.warn({ partition: from, offset: message.offset, reason: decoded.reason }, 'undecodable result sent to the DLQ');
        }
        // Only now, once it is handled or dead-lettered: a record that failed (the registry away,
        // the DLQ unwritable) is read again after kafkajs restarts the consumer and it rejoins.
        if (offset >= BigInt(next)) next = (offset + 1n).toString();
      },
    });
    await joined;
  } catch (error) {
    await consumer.disconnect().catch(() => undefined);
    throw error;
  }
  return {
    partition,
    get recordsRead() {
      return recordsRead;
    },
    get deadLettered() {
      return deadLettered;
    },
    get untrusted() {
      return untrusted;
    },
    stop: () => consumer.disconnect(),
  };
}

/** The results partition to read (the configured one, or the least read) and its end before joining. */
async function choosePartition(
  options: ReplyReaderOptions,
  topic: string,
): Promise<{ readonly partition: number; readonly end: PartitionOffsets }> {
  const admin = options.kafka.admin();
  await admin.connect();
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
    await admin.disconnect();
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
async function leastReadPartition(admin: Admin, resultsTopic: string, partitions: number): Promise<number> {
  const readers = new Array<number>(partitions).fill(0);
  const prefix = replyGroupPrefix(resultsTopic);
  const { groups } = await admin.listGroups();
  const candidates = groups.map((g) => g.groupId).filter((id) => id.startsWith(prefix));
  const live = candidates.length === 0 ? [] : (await admin.describeGroups(candidates)).groups.filter((g) => g.members.length > 0);
  for (const { groupId } of live) {
    const match = /^(\d{1,5})-/.exec(groupId.slice(prefix.length));
    const index = match === null ? -1 : Number(match[1]);
    if (index >= 0 && index < partitions) readers[index] = (readers[index] ?? 0) + 1;
  }
  const fewest = Math.min(...readers);
  const least = readers.flatMap((count, index) => (count === fewest ? [index] : []));
  return least[Math.floor(Math.random() * least.length)] ?? 0;
}

/** An assignor for a group of one: its member reads `partition` of every subscribed topic, nothing else. */
function onePartition(partition: number): PartitionAssigner {
  const name = 'GatehouseReplyPartition';
  return () => ({
    name,
    version: 1,
    assign: ({ members, topics }) =>
      Promise.resolve(
        members.map((member) => ({
          memberId: member.memberId,
          memberAssignment: AssignerProtocol.MemberAssignment.encode({
            version: 1,
            assignment: Object.fromEntries(topics.map((t) => [t, [partition]])),
            userData: Buffer.alloc(0),
          }),
        })),
      ),
    protocol: ({ topics }) => ({
      name,
      metadata: AssignerProtocol.MemberMetadata.encode({ version: 1, topics, userData: Buffer.alloc(0) }),
    }),
  });
}
