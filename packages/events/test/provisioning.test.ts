import { describe, expect, it } from 'vitest';
import type { KafkaAdmin, PartitionOffsets, TopicSpec } from '../src/kafka-admin.js';
import { provisionTopics } from '../src/provisioning.js';
import { awaitTopicsServed } from '../src/topic-readiness.js';
import { topicNames } from '../src/topics.js';

const SETTINGS = { partitions: 1, replicationFactor: 1, retentionMs: 1_000, dlqRetentionMs: 1_000, maxMessageBytes: 1_000_000 };
const OFFSETS: PartitionOffsets[] = [{ partition: 0, offset: '0', high: '0', low: '0' }];

/** A broker as one principal sees it: the topics there are, and what its createTopics answers. */
function brokerOf(create: (specs: readonly TopicSpec[], topics: Set<string>) => Promise<void>) {
  const topics = new Set<string>();
  const admin = {
    listTopics: () => Promise.resolve([...topics]),
    createTopics: (specs: readonly TopicSpec[]) => create(specs, topics),
    topicOffsets: (topic: string) => Promise.resolve(topics.has(topic) ? OFFSETS : []),
  } as unknown as KafkaAdmin;
  return { admin, topics };
}

const refused = (apiId: string): Error => Object.assign(new Error('refused'), { apiId });

describe('provisioning the topics a service produces to and consumes from', () => {
  it('leaves topics it may not create to the one that provisions them, and waits until they are there', async () => {
    const names = topicNames('unit.');
    const { admin, topics } = brokerOf(() => Promise.reject(refused('TOPIC_AUTHORIZATION_FAILED')));
    // The provision job creates them a moment after the service asked.
    setTimeout(() => {
      for (const name of Object.values(names)) {
        topics.add(name);
        topics.add(`${name}.dlq`);
      }
    }, 300);
    const result = await provisionTopics(admin, names, SETTINGS);
    expect(result.created).toHaveLength(Object.values(names).length * 2);
  });

  it('fails a wait that runs out with TOPICS_MISSING, naming each topic still missing and no other', async () => {
    const { admin, topics } = brokerOf(() => Promise.resolve());
    topics.add('there');
    await expect(awaitTopicsServed(admin, ['there', 'missing.a', 'missing.b'], 300)).rejects.toMatchObject({
      code: 'TOPICS_MISSING',
      retryable: true,
      message: expect.stringMatching(/^topics missing\.a, missing\.b not there/) as unknown,
    });
  });

  it('still fails at once on an error that waiting does not cure', async () => {
    const { admin } = brokerOf(() => Promise.reject(refused('INVALID_REPLICATION_FACTOR')));
    await expect(provisionTopics(admin, topicNames('unit.'), SETTINGS)).rejects.toMatchObject({ apiId: 'INVALID_REPLICATION_FACTOR' });
  });
});
