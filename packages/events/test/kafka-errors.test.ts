import { MultipleErrors, NetworkError, ProtocolError, TimeoutError } from '@platformatic/kafka';
import { describe, expect, it } from 'vitest';
import { kafkaClientCodes, kafkaErrorCodes } from '../src/kafka-errors.js';
import { coordinatorMoving } from '../src/publisher.js';

// The errors @platformatic/kafka throws: a broker's answer as a ProtocolError, a lost connection as
// a NetworkError, several gathered (one per broker or per retry) as MultipleErrors.
const protocol = (code: string) => new ProtocolError(code);

describe('kafkaErrorCodes and kafkaClientCodes', () => {
  it('walk the error, its cause and an aggregate’s errors, outermost first', () => {
    const error = new MultipleErrors('Producing messages failed.', [
      protocol('NOT_LEADER_OR_FOLLOWER'),
      new NetworkError('retries exhausted', { cause: protocol('PRODUCER_FENCED') }),
    ]);
    expect(kafkaErrorCodes(error)).toEqual(['NOT_LEADER_OR_FOLLOWER', 'PRODUCER_FENCED']);
    expect(kafkaClientCodes(error)).toContain('PLT_KFK_NETWORK');
    // The client codes a request that timed out as a network failure.
    expect(kafkaClientCodes(new TimeoutError('no answer'))).toEqual(['PLT_KFK_NETWORK']);
  });

  it('stop on a loop and on what is not an error', () => {
    const loop: { cause?: unknown; apiId?: string } = { apiId: 'NOT_COORDINATOR' };
    loop.cause = loop;
    expect(kafkaErrorCodes(loop)).toEqual(Array(6).fill('NOT_COORDINATOR'));
    expect(kafkaErrorCodes(undefined)).toEqual([]);
    expect(kafkaClientCodes('PLT_KFK_NETWORK')).toEqual([]);
  });
});

describe('coordinatorMoving', () => {
  it('is a coordinator being elected or loading, or a connection lost to it, however wrapped', () => {
    for (const code of ['COORDINATOR_NOT_AVAILABLE', 'NOT_COORDINATOR', 'COORDINATOR_LOAD_IN_PROGRESS', 'CONCURRENT_TRANSACTIONS']) {
      expect(coordinatorMoving(new MultipleErrors('EndTxn failed', [protocol(code)])), code).toBe(true);
    }
    expect(coordinatorMoving(new MultipleErrors('EndTxn failed', [new NetworkError('Connection to 127.0.0.1:9094 failed.')]))).toBe(true);
    // A commit whose answer never came: asked again, the broker answers for the commit it made or not.
    expect(coordinatorMoving(new TimeoutError('no answer'))).toBe(true);
  });

  it('is not an outcome: a fenced producer, or a refusal', () => {
    expect(coordinatorMoving(protocol('PRODUCER_FENCED'))).toBe(false);
    expect(coordinatorMoving(protocol('TRANSACTIONAL_ID_AUTHORIZATION_FAILED'))).toBe(false);
  });
});
