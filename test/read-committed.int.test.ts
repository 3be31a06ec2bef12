import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaAdmin, readRanges } from '@gatehouse/events';
import type { Producer } from 'kafkajs';
import { readCommitted } from './support/committed-records.js';
import { freshTopics } from './support/stack.js';
import type { TestTopics } from './support/stack.js';

// Answers will go out in Kafka transactions, and a subscriber must see exactly the committed ones.
// Another client (kafkajs) writes transactions here, some committed and some aborted, and
// Gatehouse's reader must hand on every committed record, in order, and nothing of an aborted one,
// and finish a range that ends with transaction markers or aborted records, which are never
// delivered. The Kafka client underneath hands on most aborted records by itself.
describe('reading at read_committed', () => {
  let env: TestTopics;
  let admin: KafkaAdmin;
  const producers: Producer[] = [];

  beforeAll(async () => {
    env = await freshTopics('read-committed', 3);
    admin = await KafkaAdmin.connect(env.kafka);
  });

  afterAll(async () => {
    for (const producer of producers) await producer.disconnect();
    await admin?.close();
  });

  async function transactional(name: string): Promise<Producer> {
    const producer = env.kafka.producer({ transactionalId: `${env.topics.results}.${name}`, idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    producers.push(producer);
    return producer;
  }

  /** Writes one transaction of `count` records to `partition`, committed or aborted; answers the committed values. */
  async function transaction(
    producer: Producer,
    partition: number,
    label: string,
    count: number,
    outcome: 'commit' | 'abort',
  ): Promise<string[]> {
    const txn = await producer.transaction();
    const values = Array.from({ length: count }, (_, i) => `${label}-${i}`);
    for (const value of values) await txn.send({ topic: env.topics.results, messages: [{ partition, value }] });
    await (outcome === 'commit' ? txn.commit() : txn.abort());
    return outcome === 'commit' ? values : [];
  }

  async function readAll(partition: number): Promise<string[]> {
    const { end } = await admin.offsetsSince(env.topics.results, partition, 0);
    const read: string[] = [];
    await readRanges(env.kafka, [{ topic: env.topics.results, partition, start: 0n, end }], {
      groupPrefix: `${env.topics.results}.read-committed-`,
      record: (_topic, _partition, record) => void read.push(record.value?.toString() ?? ''),
      signal: AbortSignal.timeout(20_000),
    });
    return read;
  }

  it('hands on every committed record and none of an aborted transaction, with several aborted per producer in one fetch', async () => {
    const producer = await transactional('many');
    const committed: string[] = [];
    // Every third transaction aborted: a fetch from the start covers several aborts of one producer id.
    for (let t = 0; t < 24; t++) committed.push(...(await transaction(producer, 0, `t${t}`, 3, t % 3 === 1 ? 'abort' : 'commit')));
    // The partition ends with an aborted transaction and its marker: nothing after the last committed record is delivered.
    await transaction(producer, 0, 'last', 2, 'abort');
    expect(await readAll(0)).toEqual(committed);
  });

  it('skips an aborted transaction interleaved with another producer committing, and ends a range on a commit marker', async () => {
    const [first, second] = [await transactional('left'), await transactional('right')];
    const open = await first.transaction();
    await open.send({ topic: env.topics.results, messages: [{ partition: 1, value: 'aborted-0' }] });
    const committed = await transaction(second, 1, 'kept', 2, 'commit');
    await open.send({ topic: env.topics.results, messages: [{ partition: 1, value: 'aborted-1' }] });
    await open.abort();
    committed.push(...(await transaction(second, 1, 'after', 1, 'commit')));
    expect(await readAll(1)).toEqual(committed);
  });

  it('ends a range that holds nothing but aborted records and markers', async () => {
    const producer = await transactional('none');
    await transaction(producer, 2, 'gone', 3, 'abort');
    await transaction(producer, 2, 'gone-again', 2, 'abort');
    expect(await readAll(2)).toEqual([]);
  });

  // The answer scan reads a results partition up to its end when the scan began, while answers keep
  // arriving: the range's last offset is then often a commit marker with records past it.
  it('ends a range whose last offset is a commit marker while the partition already holds records past it', async () => {
    const producer = await transactional('beyond');
    const { end: start } = await admin.offsetsSince(env.topics.results, 1, 0);
    const inRange = await transaction(producer, 1, 'in-range', 2, 'commit');
    const { end } = await admin.offsetsSince(env.topics.results, 1, 0);
    await transaction(producer, 1, 'past-the-end', 2, 'commit');
    const read: string[] = [];
    await readRanges(env.kafka, [{ topic: env.topics.results, partition: 1, start, end }], {
      groupPrefix: `${env.topics.results}.read-committed-`,
      record: (_topic, _partition, record) => void read.push(record.value?.toString() ?? ''),
      signal: AbortSignal.timeout(20_000),
    });
    expect(read).toEqual(inRange);
  });

  // The fault tests count every answer on the results topic with Kafka's own consumer: it must read
  // what Gatehouse's reader reads, partition by partition, aborted transactions and all.
  it("reads as Kafka's own Java consumer at read_committed does", async () => {
    const java = await readCommitted(env.kafka.config, env.topics.results);
    expect(java.length).toBeGreaterThan(0);
    for (const partition of [0, 1, 2])
      expect(java.filter((r) => r.partition === partition).map((r) => r.value?.toString() ?? '')).toEqual(await readAll(partition));
  });
});
