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

/** A member of `groupId` reading the commands topic from its start, with the options a test adds. */
function member(
  env: TestTopics,
  groupId: string,
  deadLetters: DeadLetters,
  options: Pick<Parameters<typeof startParallelConsumer<'commands'>>[0], 'handle' | 'maxConcurrency' | 'commitIntervalMs'>,
): Promise<RunningParallelConsumer> {
  return startParallelConsumer({
    kafka: env.kafka,
    serde: env.serde,
    role: 'commands',
    groupId,
    fromBeginning: true,
    deadLetters,
    logger,
    ...options,
  });
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
    const consumer = await member(env, groupId, new DeadLetters(publisher), {
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

    const first = await member(env, groupId, deadLetters, {
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

    const second = await member(env, groupId, deadLetters, {
      handle: (event) => {
        secondDid.add(event.command_id);
        return Promise.resolve();
      },
    });
    running.push(second);
    await eventually(() => (secondDid.has('stuck') ? true : undefined), 30_000, 'the second member to take the unfinished record');
    expect(secondDid.has('stuck')).toBe(true);
  });

  it('leaves the records it fetched of a partition that moved to another member to that member, and handles the rest once', async () => {
    const env = await freshTopics('moved', 2);
    const publisher = await EventPublisher.connect(env.kafka, env.serde);
    publishers.push(publisher);
    const groupId = `moved-${randomUUID()}`;
    const deadLetters = new DeadLetters(publisher);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const byFirst: string[] = [];
    const bySecond: string[] = [];
    const partitionOf = new Map<string, number>();
    // One record at a time, the first held until the second member has joined: every other record
    // the first member fetched is still waiting when the group moves a partition away from it.
    const first = await member(env, groupId, deadLetters, {
      maxConcurrency: 1,
      commitIntervalMs: 50,
      handle: async (event, record) => {
        byFirst.push(event.command_id);
        partitionOf.set(event.command_id, record.partition);
        if (byFirst.length === 1) await gate;
      },
    });
    running.push(first);
    await first.joined;
    await eventually(() => (first.stats().assigned.length === 2 ? true : undefined), 30_000, 'both partitions to the first member');
    const ids = Array.from({ length: 40 }, (_, i) => `moved-${i}`);
    await publisher.publishMany(
      'commands',
      ids.map((id, i) => ({ key: `tenant-${i % 20}`, event: command(`tenant-${i % 20}`, id) })),
    );
    await eventually(() => (first.stats().buffered === 40 ? true : undefined), 30_000, 'the first member to fetch all 40 records');

    const second = await member(env, groupId, deadLetters, {
      handle: (event, record) => {
        bySecond.push(event.command_id);
        partitionOf.set(event.command_id, record.partition);
        return Promise.resolve();
      },
    });
    running.push(second);
    await eventually(
      () => (first.stats().assigned.length === 1 && second.stats().assigned.length === 1 ? true : undefined),
      30_000,
      'one partition each',
    );
    release();
    const handled = (): Set<string> => new Set([...byFirst, ...bySecond]);
    await eventually(() => (ids.every((id) => handled().has(id)) ? true : undefined), 30_000, 'every record handled');
    await eventually(() => (first.stats().buffered === 0 ? true : undefined), 30_000, 'the first member to drain');

    // Only the record that was running when its partition moved may be handled by both members.
    const twice = byFirst.filter((id) => bySecond.includes(id));
    expect(twice.length, `handled by both members: ${twice.join(', ')}`).toBeLessThanOrEqual(1);
    expect(byFirst.length, 'records the first member handled more than once').toBe(new Set(byFirst).size);
    expect(bySecond.length, 'records the second member handled more than once').toBe(new Set(bySecond).size);
    // The second member took over every record of its partition, none of the other's.
    const [moved] = second.stats().assigned;
    const ofMoved = ids.filter((id) => partitionOf.get(id) === moved);
    expect(ofMoved.length).toBeGreaterThan(0);
    expect([...bySecond].sort(), `records of partition ${String(moved)}`).toEqual(ofMoved.sort());
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
    const current = await member(env, groupId, new DeadLetters(publisher), {
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
