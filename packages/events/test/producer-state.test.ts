import { MultipleErrors, NetworkError, ProtocolError } from '@platformatic/kafka';
import { describe, expect, it } from 'vitest';
import { producerStateLost } from '../src/publisher.js';

// The errors @platformatic/kafka's producer throws: a broker's error code as a ProtocolError, several
// gathered (one per broker a send went to) as MultipleErrors.
const protocol = (code: string) => new ProtocolError(code);

describe('producerStateLost', () => {
  it('recognises the errors after which an idempotent producer needs a new producer id', () => {
    for (const code of ['OUT_OF_ORDER_SEQUENCE_NUMBER', 'UNKNOWN_PRODUCER_ID', 'INVALID_PRODUCER_EPOCH', 'INVALID_PRODUCER_ID_MAPPING']) {
      expect(producerStateLost(protocol(code)), code).toBe(true);
    }
  });

  it('finds them wrapped as a cause or inside an aggregate', () => {
    expect(producerStateLost(new NetworkError('retries exhausted', { cause: protocol('OUT_OF_ORDER_SEQUENCE_NUMBER') }))).toBe(true);
    const aggregate = new MultipleErrors('Producing messages failed.', [
      protocol('NOT_LEADER_OR_FOLLOWER'),
      protocol('UNKNOWN_PRODUCER_ID'),
    ]);
    expect(producerStateLost(aggregate)).toBe(true);
  });

  it('leaves other failures to the caller', () => {
    expect(producerStateLost(protocol('NOT_LEADER_OR_FOLLOWER'))).toBe(false);
    expect(producerStateLost(protocol('MESSAGE_TOO_LARGE'))).toBe(false);
    expect(producerStateLost(new NetworkError('Connection to 127.0.0.1:9092 failed.'))).toBe(false);
    expect(producerStateLost(undefined)).toBe(false);
    const loop: { cause?: unknown } = {};
    loop.cause = loop;
    expect(producerStateLost(loop)).toBe(false);
  });
});
