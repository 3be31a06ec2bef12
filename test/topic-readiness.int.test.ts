// A service's start on topics another process is still creating (`npm start` on a new topic prefix
// starts every service at once, and each provisions the topics): it waits for them, bounded, and
// fails naming the topics still missing rather than on the first topic the broker does not know yet.
import { afterAll, describe, expect, it } from 'vitest';
import { awaitTopicsServed, KafkaAdmin, provisionTopics, topicNames, topicOffsets } from '@gatehouse/events';
import type { TopicSpec } from '@gatehouse/events';
import { config, kafkaFor, uniquePrefix } from './support/stack.js';

const spec = (topic: string): TopicSpec => ({ topic, partitions: 2, replicationFactor: 1, configs: [] });

describe('waiting for the topics a service produces to and consumes from', () => {
  const admins: KafkaAdmin[] = [];
  const connect = async (label: string): Promise<KafkaAdmin> => {
    const admin = await KafkaAdmin.connect(kafkaFor(label));
    admins.push(admin);
    return admin;
  };
  afterAll(async () => {
    await Promise.all(admins.map((admin) => admin.close()));
  });

  it('waits for a topic another process creates a moment later, then reads its partitions', async () => {
    const [waiter, creator] = await Promise.all([connect('readiness-waiter'), connect('readiness-creator')]);
    const topic = `${uniquePrefix('readiness')}gatehouse.commands.dlq`;
    const waiting = awaitTopicsServed(waiter, [topic], 20_000);
    const read = topicOffsets(waiter, topic, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await creator.createTopics([spec(topic)]);
    await expect(waiting).resolves.toBeUndefined();
    expect((await read).map((p) => p.partition)).toEqual([0, 1]);
  });

  it('fails after its bound naming every topic still missing, and only those', async () => {
    const admin = await connect('readiness-bound');
    const prefix = uniquePrefix('readiness-bound');
    const [there, missing, alsoMissing] = ['a', 'b', 'c'].map((name) => `${prefix}${name}`) as [string, string, string];
    await admin.createTopics([spec(there)]);
    const started = Date.now();
    const error = (await awaitTopicsServed(admin, [there, missing, alsoMissing], 1_500).then(
      () => undefined,
      (e: unknown) => e,
    )) as { code?: string; message?: string } | undefined;
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
    expect(error?.code).toBe('TOPICS_MISSING');
    expect(error?.message).toContain(`${missing}, ${alsoMissing}`);
    expect(error?.message).not.toContain(`${there},`);
  });

  it('starts every service of a new topic prefix at once: each provisions and finds every topic served', async () => {
    const topics = topicNames(uniquePrefix('readiness-start'));
    const starters = await Promise.all(['policy', 'approval', 'executor-1', 'executor-2'].map((name) => connect(`readiness-${name}`)));
    const results = await Promise.all(
      starters.map((admin) => provisionTopics(admin, topics, { ...config.topicSettings, partitions: 2, replicationFactor: 1 })),
    );
    expect(results).toHaveLength(starters.length);
    for (const topic of [topics.commands, `${topics.commands}.dlq`, topics.execute, `${topics.execute}.dlq`]) {
      expect(await topicOffsets(admins[0] as KafkaAdmin, topic)).toHaveLength(2);
    }
  });
});
