import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { Consumer } from 'kafkajs';
import { eventually, kafkaFor, uniquePrefix } from './support/stack.js';

// The broker line is chosen by what kafkajs 2.2.4 can do against it; this pins each capability.
describe('kafkajs against the local broker', () => {
  const kafka = kafkaFor('compat');
  const topic = `${uniquePrefix('compat')}records`;
  const consumers: Consumer[] = [];

  afterAll(async () => {
    await Promise.all(consumers.map((c) => c.disconnect()));
  });

  it('creates topics, produces idempotently, and shares partitions between two group members with committed offsets', async () => {
    const admin = kafka.admin();
    await admin.connect();
    expect(await admin.createTopics({ topics: [{ topic, numPartitions: 4, replicationFactor: 1 }], waitForLeaders: true })).toBe(true);

    const producer = kafka.producer({ idempotent: true });
    await producer.connect();
    const send = (from: number, to: number) =>
      producer.send({
        topic,
        acks: -1,
        messages: Array.from({ length: to - from }, (_, i) => ({ key: `k${from + i}`, value: `v${from + i}` })),
      });
    await send(0, 100);

    const groupId = `compat-${randomUUID()}`;
    const counts = new Map<string, number>();
    const assignments = new Map<string, number[]>();
    const member = async (name: string) => {
      const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1_000 });
      consumers.push(consumer);
      consumer.on(consumer.events.GROUP_JOIN, (e) => assignments.set(name, e.payload.memberAssignment[topic] ?? []));
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        eachMessage: ({ message }) => {
          const value = message.value?.toString() ?? '';
          counts.set(value, (counts.get(value) ?? 0) + 1);
          return Promise.resolve();
        },
      });
    };

    await member('first');
    await eventually(() => (counts.size === 100 ? true : undefined), 30_000, 'first member to read 100 records');
    await member('second');
    await eventually(
      () => ((assignments.get('second')?.length ?? 0) > 0 && (assignments.get('first')?.length ?? 0) < 4 ? true : undefined),
      30_000,
      'the rebalance to give the second member partitions',
    );
    expect([...(assignments.get('first') ?? []), ...(assignments.get('second') ?? [])].sort()).toEqual([0, 1, 2, 3]);

    await send(100, 200);
    await eventually(() => (counts.size === 200 ? true : undefined), 30_000, 'both members to read the next 100 records');
    expect([...counts.values()].every((n) => n === 1)).toBe(true);

    await Promise.all(consumers.map((c) => c.disconnect()));
    consumers.length = 0;
    const offsets = await admin.fetchOffsets({ groupId, topics: [topic] });
    const committed = offsets[0]?.partitions.reduce((sum, p) => sum + Number(p.offset), 0);
    expect(committed).toBe(200);
    await producer.disconnect();
    await admin.disconnect();
  });
});
