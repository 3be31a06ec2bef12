import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeadLetters, EventPublisher, startEventConsumer, subjectOf, TOPIC_ROLES } from '@gatehouse/events';
import type { ConsumedRecord, EventByRole, RunningConsumer, TopicRole } from '@gatehouse/events';
import { sampleEvents } from './support/sample-events.js';
import { config, eventually, freshTopics, logger } from './support/stack.js';
import type { TestTopics } from './support/stack.js';

describe('every event type round-trips through Kafka and the schema registry', () => {
  let env: TestTopics;
  let publisher: EventPublisher;
  const received = new Map<TopicRole, { event: unknown; record: ConsumedRecord }>();
  const consumers: RunningConsumer[] = [];

  beforeAll(async () => {
    env = await freshTopics('roundtrip');
    publisher = await EventPublisher.connect(env.kafka, env.serde);
    const deadLetters = new DeadLetters(publisher);
    for (const role of TOPIC_ROLES) {
      const running = await startEventConsumer({
        kafka: env.kafka,
        serde: env.serde,
        role,
        groupId: `roundtrip-${role}-${randomUUID()}`,
        fromBeginning: true,
        deadLetters,
        logger,
        handle: (event: EventByRole[typeof role], record) => {
          received.set(role, { event, record });
          return Promise.resolve();
        },
      });
      consumers.push(running);
    }
  });

  afterAll(async () => {
    await Promise.all(consumers.map((c) => c.stop()));
    await publisher.disconnect();
  });

  it.each(TOPIC_ROLES)('decodes a published %s event into exactly the event that was sent', async (role) => {
    const event = sampleEvents[role];
    await publisher.publish(role, 'acme', event, { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
    const got = await eventually(() => received.get(role), 30_000, `${role} event`);
    expect(got.event).toEqual(event);
    expect(got.record.key).toBe('acme');
    expect(got.record.headers?.['traceparent']?.toString()).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
  });

  it('registers every subject under TopicNameStrategy with BACKWARD compatibility', async () => {
    for (const role of TOPIC_ROLES) {
      const subject = subjectOf(env.topics[role]);
      const response = await fetch(`${config.registryUrl}/config/${encodeURIComponent(subject)}`);
      expect(response.status).toBe(200);
      const body = (await response.json()) as { compatibilityLevel: string };
      expect(body.compatibilityLevel).toBe('BACKWARD');
      const versions = await fetch(`${config.registryUrl}/subjects/${encodeURIComponent(subject)}/versions`);
      expect(await versions.json()).toEqual([1]);
    }
  });

  it('refuses to encode an event that does not match its schema and names the path, not the value', () => {
    const bad = { ...sampleEvents.commands, tool: 42 } as unknown as EventByRole['commands'];
    expect(() => env.serde.encode('commands', bad)).toThrowError(/at tool/);
    try {
      env.serde.encode('commands', { ...sampleEvents.commands, arguments: 7 } as unknown as EventByRole['commands']);
    } catch (error) {
      expect((error as { code?: string }).code).toBe('ENCODE_FAILED');
      expect((error as Error).message).not.toContain('C-1842');
    }
  });
});

describe('a publisher whose send failed', () => {
  let env: TestTopics;
  let publisher: EventPublisher;
  const topic = `events-tiny-${randomUUID()}`;

  beforeAll(async () => {
    env = await freshTopics('suspect', 1);
    const admin = env.kafka.admin();
    await admin.connect();
    try {
      // A topic whose records may be 2 KiB at most: the broker refuses a bigger one.
      await admin.createTopics({
        waitForLeaders: true,
        topics: [{ topic, numPartitions: 1, replicationFactor: 1, configEntries: [{ name: 'max.message.bytes', value: '2048' }] }],
      });
    } finally {
      await admin.disconnect();
    }
    publisher = await EventPublisher.connect(env.kafka, env.serde);
  });
  afterAll(async () => {
    await publisher?.disconnect();
    const admin = env.kafka.admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
  });

  // A produce request that throws may still have been appended (the connection dropped after the
  // append); a later batch under the same sequence numbers would be acknowledged as its retry and
  // dropped. So no send follows a failed one under the same producer id.
  it('sends its next batch on a new producer, and that batch lands', async () => {
    await expect(publisher.sendRaw(topic, [{ key: 'k', value: Buffer.alloc(8 * 1024, 1) }])).rejects.toThrow();
    expect(publisher.replacements).toBe(0);
    await publisher.sendRaw(topic, [{ key: 'k', value: Buffer.from('after the failure') }]);
    expect(publisher.replacements).toBe(1);

    const admin = env.kafka.admin();
    await admin.connect();
    const offsets = await admin.fetchTopicOffsets(topic);
    await admin.disconnect();
    expect(offsets.map((o) => [o.partition, o.high])).toEqual([[0, '1']]);
  });
});
