import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeadLetters, dlqTopicOf, DLQ_HEADER, EventPublisher, startEventConsumer, writeWireFormat } from '@gatehouse/events';
import type { KafkaMessage, Producer } from 'kafkajs';
import type { RunningConsumer, ToolCommand } from '@gatehouse/events';
import { sampleEvents } from './support/sample-events.js';
import { eventually, freshTopics, logger, readRaw } from './support/stack.js';
import type { TestTopics } from './support/stack.js';

function header(message: KafkaMessage, name: string): string | undefined {
  return message.headers?.[name]?.toString();
}

describe('undecodable records go to the DLQ with their reason and the consumer carries on', () => {
  let env: TestTopics;
  let publisher: EventPublisher;
  let raw: Producer;
  let running: RunningConsumer;
  const consumed: ToolCommand[] = [];

  beforeAll(async () => {
    env = await freshTopics('dlq', 1);
    publisher = await EventPublisher.connect(env.kafka, env.serde);
    raw = env.kafka.producer();
    await raw.connect();
    running = await startEventConsumer({
      kafka: env.kafka,
      serde: env.serde,
      role: 'commands',
      groupId: `dlq-${randomUUID()}`,
      fromBeginning: true,
      deadLetters: new DeadLetters(publisher),
      logger,
      handle: (event) => {
        consumed.push(event);
        return Promise.resolve();
      },
    });
  });

  afterAll(async () => {
    await running.stop();
    await raw.disconnect();
    await publisher.disconnect();
  });

  it('routes garbage bytes, a wrong magic byte, an unknown schema id, a foreign schema and a truncated body, then consumes the next good record', async () => {
    const good = env.serde.encode('commands', sampleEvents.commands);
    const foreign = env.serde.encode('results', sampleEvents.results);
    const bad: { label: string; value: Buffer; reason: string }[] = [
      { label: 'garbage', value: Buffer.from('not avro at all, just text'), reason: 'NOT_WIRE_FORMAT' },
      { label: 'magic', value: Buffer.concat([Buffer.from([0x01]), good.subarray(1)]), reason: 'NOT_WIRE_FORMAT' },
      { label: 'unknown-id', value: writeWireFormat(2_000_000_000, good.subarray(5)), reason: 'UNKNOWN_SCHEMA_ID' },
      { label: 'foreign', value: foreign, reason: 'SCHEMA_MISMATCH' },
      { label: 'truncated', value: good.subarray(0, good.length - 7), reason: 'AVRO_DECODE_FAILED' },
    ];
    await raw.send({
      topic: env.topics.commands,
      messages: bad.map((b) => ({ key: b.label, value: b.value, headers: { 'x-origin': b.label } })),
    });
    const next = { ...sampleEvents.commands, command_id: 'after-the-bad-ones' };
    await publisher.publish('commands', 'acme', next);

    await eventually(() => (consumed.length >= 1 ? true : undefined), 30_000, 'the good record');
    expect(consumed).toEqual([next]);

    const dead = await readRaw(env.kafka, dlqTopicOf(env.topics.commands), bad.length);
    expect(dead).toHaveLength(bad.length);
    for (const [index, expected] of bad.entries()) {
      const record = dead.find((m) => m.key?.toString() === expected.label);
      expect(record, expected.label).toBeDefined();
      if (record === undefined) continue;
      expect(header(record, DLQ_HEADER.reason)).toBe(expected.reason);
      expect(header(record, DLQ_HEADER.message)?.length).toBeGreaterThan(0);
      expect(header(record, DLQ_HEADER.originTopic)).toBe(env.topics.commands);
      expect(header(record, DLQ_HEADER.originPartition)).toBe('0');
      expect(header(record, DLQ_HEADER.originOffset)).toBe(String(index));
      expect(header(record, 'x-origin')).toBe(expected.label);
      expect(record.value?.equals(expected.value)).toBe(true);
    }
  });
});
