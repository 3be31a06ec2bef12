import { describe, expect, it } from 'vitest';
import { producerStateLost } from '../src/publisher.js';

// The shapes kafkajs throws from sendBatch: a protocol error, or one wrapped after retries.
const protocol = (type: string) => Object.assign(new Error(type), { name: 'KafkaJSProtocolError', type });

describe('producerStateLost', () => {
  it('recognises the errors after which an idempotent producer must be replaced', () => {
    for (const type of ['OUT_OF_ORDER_SEQUENCE_NUMBER', 'UNKNOWN_PRODUCER_ID', 'INVALID_PRODUCER_EPOCH', 'INVALID_PRODUCER_ID_MAPPING']) {
      expect(producerStateLost(protocol(type)), type).toBe(true);
    }
  });

  it('finds them wrapped by retries or inside an aggregate', () => {
    const retried = Object.assign(new Error('retries exceeded'), {
      name: 'KafkaJSNumberOfRetriesExceeded',
      cause: protocol('OUT_OF_ORDER_SEQUENCE_NUMBER'),
    });
    expect(producerStateLost(retried)).toBe(true);
    const aggregate = Object.assign(new Error('several'), {
      errors: [protocol('NOT_LEADER_FOR_PARTITION'), protocol('UNKNOWN_PRODUCER_ID')],
    });
    expect(producerStateLost(aggregate)).toBe(true);
  });

  it('leaves other failures to the caller', () => {
    expect(producerStateLost(protocol('NOT_LEADER_FOR_PARTITION'))).toBe(false);
    expect(producerStateLost(new Error('Connection error: connect ECONNREFUSED 127.0.0.1:9092'))).toBe(false);
    expect(producerStateLost(undefined)).toBe(false);
    const loop: { cause?: unknown } = {};
    loop.cause = loop;
    expect(producerStateLost(loop)).toBe(false);
  });
});
