import { randomUUID } from 'node:crypto';
import type { EventByRole, EventSerde, TopicRole } from '@gatehouse/events';
import type { Consumer, IHeaders } from 'kafkajs';
import { readCommitted } from './committed-records.js';
import { pollUntil } from './poll.js';
import type { TestKafka } from './kafkajs.js';

/** One record of a topic as it sits in the log. */
interface LoggedRecord<T> {
  readonly partition: number;
  readonly offset: string;
  readonly key: string | null;
  readonly headers: IHeaders | undefined;
  /** The decoded value; undefined when the decoder refused it. */
  readonly value: T | undefined;
}

/**
 * Every record of one topic from its beginning, each (partition, offset) exactly once however often
 * the reader sees it: a reader that survives a broker restart re-reads from its last commit, and
 * those repeats are the reader's, not the topic's.
 */
export interface TopicLedger<T> {
  readonly topic: string;
  readonly records: readonly LoggedRecord<T>[];
  /** Records whose value did not decode. */
  readonly undecodable: number;
  /**
   * Records the live reader (kafkajs) handed on that Kafka's own read_committed consumer does not:
   * records of aborted transactions. Counted, and dropped from `records`, at each `caughtUp`.
   */
  readonly notCommitted: number;
  /**
   * Resolves once every record up to the topic's current end has been read. `records` is then what
   * Kafka's own consumer reads at read_committed (`readCommitted`), in partition and offset order.
   */
  caughtUp(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function openLedger<T>(
  kafka: TestKafka,
  topic: string,
  decode: (value: Buffer | null) => Promise<T | undefined>,
  label = 'ledger',
): Promise<TopicLedger<T>> {
  const records: LoggedRecord<T>[] = [];
  const seen = new Set<string>();
  const next = new Map<number, bigint>();
  let undecodable = 0;
  let notCommitted = 0;
  const consumer: Consumer = kafka.consumer({ groupId: `${label}-${randomUUID()}`, allowAutoTopicCreation: false });
  let onJoin: () => void = () => undefined;
  const joined = new Promise<void>((resolve) => (onJoin = resolve));
  consumer.on(consumer.events.GROUP_JOIN, () => onJoin());
  // A batch's last offset may be a transaction marker, or a record of an aborted transaction, which
  // is never handed on: the reader's position moves past them when the batch is done.
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
    const after = BigInt(payload.lastOffset) + 1n;
    if ((next.get(payload.partition) ?? 0n) < after) next.set(payload.partition, after);
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      const id = `${partition}:${message.offset}`;
      if (seen.has(id)) return;
      seen.add(id);
      const value = await decode(message.value);
      if (value === undefined) undecodable += 1;
      records.push({
        partition,
        offset: message.offset,
        key: message.key === null ? null : message.key.toString('utf8'),
        headers: message.headers,
        value,
      });
      const after = BigInt(message.offset) + 1n;
      if ((next.get(partition) ?? 0n) < after) next.set(partition, after);
    },
  });
  await joined;
  const admin = kafka.admin();
  return {
    topic,
    records,
    get undecodable() {
      return undecodable;
    },
    get notCommitted() {
      return notCommitted;
    },
    async caughtUp(timeoutMs = 30_000) {
      await admin.connect();
      try {
        const ends = await admin.fetchTopicOffsets(topic);
        await pollUntil(
          () =>
            Promise.resolve(
              ends.every((e) => BigInt(e.high) <= BigInt(e.low) || (next.get(e.partition) ?? 0n) >= BigInt(e.high)) ? true : undefined,
            ),
          timeoutMs,
          `the end of ${topic} (${ends.map((e) => `${e.partition}@${e.high}`).join(' ')})`,
          50,
        );
      } finally {
        await admin.disconnect();
      }
      const committed = await readCommitted(kafka.config, topic, timeoutMs);
      const live = new Map(records.map((r) => [`${r.partition}:${r.offset}`, r]));
      const read: LoggedRecord<T>[] = [];
      for (const c of committed) {
        const id = `${c.partition}:${c.offset}`;
        const known = live.get(id);
        live.delete(id);
        if (known !== undefined) {
          read.push(known);
          continue;
        }
        // Committed, and not handed on by the live reader yet (it stops at the end it last fetched).
        seen.add(id);
        const value = await decode(c.value);
        if (value === undefined) undecodable += 1;
        const headers: IHeaders = {};
        for (const [name, bytes] of c.headers) if (bytes !== null) headers[name] = bytes;
        read.push({ partition: c.partition, offset: c.offset, key: c.key === null ? null : c.key.toString('utf8'), headers, value });
      }
      notCommitted += live.size;
      records.length = 0;
      for (const record of read) records.push(record);
    },
    stop: () => consumer.disconnect(),
  };
}

/** A ledger of one Gatehouse topic, decoded with its schema. */
export function openEventLedger<R extends TopicRole>(
  g: { readonly kafka: TestKafka; readonly serde: EventSerde; readonly label: string },
  role: R,
): Promise<TopicLedger<EventByRole[R]>> {
  return openLedger(
    g.kafka,
    g.serde.topics[role],
    async (value) => {
      const decoded = await g.serde.decode(role, value);
      return decoded.ok ? decoded.value : undefined;
    },
    `${g.label}-${role}-ledger`,
  );
}
