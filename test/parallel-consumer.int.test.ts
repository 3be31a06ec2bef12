import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { DeadLetters, EventPublisher, startParallelConsumer } from '@gatehouse/events';
import type { RunningParallelConsumer, ToolCommand } from '@gatehouse/events';
import { pollUntil } from './support/poll.js';
import { sampleEvents } from './support/sample-events.js';
import { eventually, freshTopics, logger } from './support/stack.js';
import type { TestTopics } from './support/stack.js';

function command(tenant: string, id: string): ToolCommand {
  return { ...sampleEvents.commands, tenant, command_id: id };
}

async function committedOffset(env: TestTopics, groupId: string): Promise<number> {
  const admin = env.kafka.admin();
  await admin.connect();
  try {
    const [topic] = await admin.fetchOffsets({ groupId, topics: [env.topics.commands] });
    return Number(topic?.partitions.find((p) => p.partition === 0)?.offset ?? -1);
  } finally {
    await admin.disconnect();
  }
}

describe('the parallel consumer', () => {
  const running: RunningParallelConsumer[] = [];
  const publishers: EventPublisher[] = [];

  afterEach(async () => {
    await Promise.all(running.splice(0).map((r) => r.stop({ drainTimeoutMs: 0 })));
    await Promise.all(publishers.splice(0).map((p) => p.disconnect()));
  });

  it('lets other tenants on the same partition finish while one is slow, and commits only up to the slow record', async () => {
    const env = await freshTopics('parallel', 1);
    const publisher = await EventPublisher.connect(env.kafka, env.serde);
    publishers.push(publisher);
    const groupId = `parallel-${randomUUID()}`;
    let release: () => void = () => undefined;
    const slowGate = new Promise<void>((resolve) => (release = resolve));
    const done = new Set<string>();
    const consumer = await startParallelConsumer({
      kafka: env.kafka,
      serde: env.serde,
      role: 'commands',
      groupId,
      fromBeginning: true,
      deadLetters: new DeadLetters(publisher),
      logger,
      commitIntervalMs: 50,
      handle: async (event) => {
        if (event.tenant === 'slow') await slowGate;
        done.add(event.command_id);
      },
    });
    running.push(consumer);

    await publisher.publish('commands', 'slow', command('slow', 'slow-0'));
    await publisher.publishMany(
      'commands',
      Array.from({ length: 20 }, (_, i) => ({ key: `tenant-${i % 5}`, event: command(`tenant-${i % 5}`, `fast-${i}`) })),
    );

    await eventually(() => (done.size === 20 ? true : undefined), 30_000, 'the 20 fast records');
    expect(done.has('slow-0')).toBe(false);
    const whileSlow = await committedOffset(env, groupId);
    expect(whileSlow).toBeLessThanOrEqual(0);

    release();
    await eventually(() => (done.has('slow-0') ? true : undefined), 10_000, 'the slow record');
    // Commits run on a 200 ms tick: poll the group's committed offset until it passes every record.
    const committed = await pollUntil(
      async () => {
        const offset = await committedOffset(env, groupId);
        return offset >= 21 ? offset : undefined;
      },
      10_000,
      'the commit past the slow record',
      50,
    );
    expect(committed).toBe(21);
  });

  it('hands an unfinished record to the next member of the group when the first one dies', async () => {
    const env = await freshTopics('handover', 1);
    const publisher = await EventPublisher.connect(env.kafka, env.serde);
    publishers.push(publisher);
    const groupId = `handover-${randomUUID()}`;
    const deadLetters = new DeadLetters(publisher);
    const firstSaw = new Set<string>();
    const secondDid = new Set<string>();

    const first = await startParallelConsumer({
      kafka: env.kafka,
      serde: env.serde,
      role: 'commands',
      groupId,
      fromBeginning: true,
      deadLetters,
      logger,
      commitIntervalMs: 50,
      handle: async (event) => {
        firstSaw.add(event.command_id);
        if (event.command_id === 'stuck') await new Promise<never>(() => undefined);
      },
    });
    await publisher.publish('commands', 'a', command('a', 'stuck'));
    await publisher.publish('commands', 'b', command('b', 'after'));
    await eventually(() => (firstSaw.has('stuck') && firstSaw.has('after') ? true : undefined), 30_000, 'the first member to take both');
    await first.stop({ drainTimeoutMs: 0 });

    const second = await startParallelConsumer({
      kafka: env.kafka,
      serde: env.serde,
      role: 'commands',
      groupId,
      fromBeginning: true,
      deadLetters,
      logger,
      handle: (event) => {
        secondDid.add(event.command_id);
        return Promise.resolve();
      },
    });
    running.push(second);
    await eventually(() => (secondDid.has('stuck') ? true : undefined), 30_000, 'the second member to take the unfinished record');
    expect(secondDid.has('stuck')).toBe(true);
  });

  it('joins a group whose other member runs the previous release’s client (kafkajs), and takes its partitions when it leaves', async () => {
    const env = await freshTopics('mixed', 2);
    const publisher = await EventPublisher.connect(env.kafka, env.serde);
    publishers.push(publisher);
    const groupId = `mixed-${randomUUID()}`;
    const previous = env.kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1_000 });
    const byPrevious = new Set<string>();
    let previousJoined: () => void = () => undefined;
    const previousJoin = new Promise<void>((resolve) => (previousJoined = resolve));
    previous.on(previous.events.GROUP_JOIN, () => previousJoined());
    await previous.connect();
    await previous.subscribe({ topic: env.topics.commands, fromBeginning: true });
    await previous.run({
      eachMessage: async ({ message }) => {
        const decoded = await env.serde.decode('commands', message.value);
        if (decoded.ok) byPrevious.add(decoded.value.command_id);
      },
    });
    await previousJoin;

    const byCurrent = new Set<string>();
    const current = await startParallelConsumer({
      kafka: env.kafka,
      serde: env.serde,
      role: 'commands',
      groupId,
      fromBeginning: true,
      deadLetters: new DeadLetters(publisher),
      logger,
      handle: (event) => {
        byCurrent.add(event.command_id);
        return Promise.resolve();
      },
    });
    running.push(current);
    await current.joined;
    await eventually(() => (current.stats().assigned.length === 1 ? true : undefined), 30_000, 'one partition each');

    const batch = (prefix: string) =>
      Array.from({ length: 20 }, (_, i) => ({ key: `tenant-${i}`, event: command(`tenant-${i}`, `${prefix}-${i}`) }));
    await publisher.publishMany('commands', batch('both'));
    await eventually(() => (byPrevious.size + byCurrent.size >= 20 ? true : undefined), 30_000, 'the first 20 records');
    expect(byPrevious.size).toBeGreaterThan(0);
    expect(byCurrent.size).toBeGreaterThan(0);

    await previous.disconnect();
    await eventually(() => (current.stats().assigned.length === 2 ? true : undefined), 30_000, 'both partitions');
    await publisher.publishMany('commands', batch('after'));
    await eventually(
      () => (Array.from({ length: 20 }, (_, i) => `after-${i}`).every((id) => byCurrent.has(id)) ? true : undefined),
      30_000,
      'the next 20 records',
    );
  });
});
