import { describe, expect, it } from 'vitest';
import { skipAbortedBatches } from '@gatehouse/events';
import type { WireBatch } from '@gatehouse/events';

const TRANSACTIONAL = 1 << 4;
const CONTROL = 1 << 5;

function data(producerId: bigint, firstOffset: bigint, count = 1): WireBatch {
  return {
    firstOffset,
    lastOffsetDelta: count - 1,
    attributes: TRANSACTIONAL,
    producerId,
    records: Array.from({ length: count }, (_, i) => ({ offsetDelta: i })),
  };
}
function marker(producerId: bigint, offset: bigint, type: 'abort' | 'commit'): WireBatch {
  const key = Buffer.alloc(4);
  key.writeInt16BE(type === 'abort' ? 0 : 1, 2);
  return { firstOffset: offset, lastOffsetDelta: 0, attributes: TRANSACTIONAL | CONTROL, producerId, records: [{ key, offsetDelta: 0 }] };
}
const delivered = (batches: readonly WireBatch[]): bigint[] =>
  batches.filter((b) => (b.attributes & CONTROL) === 0).map((b) => b.firstOffset);

describe('skipAbortedBatches', () => {
  it('skips every aborted transaction of one producer in a fetch, not only its last', () => {
    const p = 7n;
    const batches = [
      data(p, 0n, 2),
      marker(p, 2n, 'abort'),
      data(p, 3n),
      marker(p, 4n, 'commit'),
      data(p, 5n),
      marker(p, 6n, 'abort'),
      data(p, 7n),
      marker(p, 8n, 'commit'),
    ];
    const skipped = skipAbortedBatches({
      partitionIndex: 0,
      records: batches,
      abortedTransactions: [
        { producerId: p, firstOffset: 5n },
        { producerId: p, firstOffset: 0n },
      ],
    });
    expect(skipped).toBe(3);
    expect(delivered(batches)).toEqual([3n, 7n]);
  });

  it('skips an aborted transaction whose marker lies beyond the fetch, and keeps another producer between', () => {
    const batches = [data(1n, 10n), data(2n, 11n), marker(2n, 12n, 'commit'), data(1n, 13n, 3)];
    expect(skipAbortedBatches({ partitionIndex: 0, records: batches, abortedTransactions: [{ producerId: 1n, firstOffset: 10n }] })).toBe(
      4,
    );
    expect(delivered(batches)).toEqual([11n]);
  });

  it('keeps a producer’s records before its aborted transaction began, and records written outside transactions', () => {
    const plain: WireBatch = { firstOffset: 21n, lastOffsetDelta: 0, attributes: 0, producerId: 1n, records: [{ offsetDelta: 0 }] };
    const batches = [data(1n, 19n), marker(1n, 20n, 'commit'), plain, data(1n, 22n), marker(1n, 23n, 'abort')];
    skipAbortedBatches({ partitionIndex: 0, records: batches, abortedTransactions: [{ producerId: 1n, firstOffset: 22n }] });
    expect(delivered(batches)).toEqual([19n, 21n]);
  });

  it('leaves a fetch with no aborted transactions as it was', () => {
    const batches = [data(1n, 0n), marker(1n, 1n, 'commit')];
    expect(skipAbortedBatches({ partitionIndex: 0, records: batches, abortedTransactions: null })).toBe(0);
    expect(delivered(batches)).toEqual([0n]);
  });
});
