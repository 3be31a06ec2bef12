import { describe, expect, it } from 'vitest';
import { murmur2 } from '@platformatic/kafka';
import { Partitioners } from 'kafkajs';
import type { Message, PartitionMetadata } from 'kafkajs';
import { PARTITION_KEY_HEADER, partitionFor } from '@gatehouse/events';

const partitions = (n: number): PartitionMetadata[] =>
  Array.from({ length: n }, (_, partitionId) => ({
    partitionId,
    leader: 1,
    replicas: [1],
    isr: [1],
    partitionErrorCode: 0,
    offlineReplicas: [],
  }));

describe('the reply-aware partitioner', () => {
  // kafkajs' default partitioner, Java-compatible murmur2, is the reference the partitions must match.
  const choose = (args: { topic: string; partitionMetadata: PartitionMetadata[]; message: Message }) =>
    partitionFor(args.message, args.topic, 'gatehouse.results', args.partitionMetadata.length, murmur2);
  const byKey = Partitioners.DefaultPartitioner();
  const message = (headers: Record<string, string>) => ({ key: 'run_1', value: 'v', headers });

  it('sends a result to the reply partition its command named', () => {
    expect(
      choose({ topic: 'gatehouse.results', partitionMetadata: partitions(24), message: message({ 'gatehouse-reply-partition': '17' }) }),
    ).toBe(17);
  });

  it('partitions by key on every other topic, and for a reply partition the topic does not have', () => {
    const keyed = byKey({ topic: 'gatehouse.execute', partitionMetadata: partitions(24), message: message({}) });
    expect(
      choose({ topic: 'gatehouse.execute', partitionMetadata: partitions(24), message: message({ 'gatehouse-reply-partition': '17' }) }),
    ).toBe(keyed);
    expect(
      choose({ topic: 'gatehouse.results', partitionMetadata: partitions(24), message: message({ 'gatehouse-reply-partition': '24' }) }),
    ).toBe(keyed);
    expect(
      choose({ topic: 'gatehouse.results', partitionMetadata: partitions(24), message: message({ 'gatehouse-reply-partition': 'seven' }) }),
    ).toBe(keyed);
    expect(choose({ topic: 'gatehouse.results', partitionMetadata: partitions(24), message: message({}) })).toBe(keyed);
  });

  it('partitions by the partition key header when a record carries one, whatever its key', () => {
    const spread = (commandId: string, key: string) =>
      choose({
        topic: 'gatehouse.execute',
        partitionMetadata: partitions(6),
        message: { key, value: 'v', headers: { [PARTITION_KEY_HEADER]: commandId } },
      });
    expect(spread('cmd_1', 'tenant-a')).toBe(spread('cmd_1', 'tenant-b'));
    expect(spread('cmd_1', 'tenant-a')).toBe(
      byKey({ topic: 'gatehouse.execute', partitionMetadata: partitions(6), message: { key: 'cmd_1', value: 'v' } }),
    );
    expect(
      choose({
        topic: 'gatehouse.execute',
        partitionMetadata: partitions(6),
        message: { key: 'tenant-a', value: 'v', headers: { [PARTITION_KEY_HEADER]: '' } },
      }),
    ).toBe(byKey({ topic: 'gatehouse.execute', partitionMetadata: partitions(6), message: { key: 'tenant-a', value: 'v' } }));
  });

  it('puts a key in the partition Java clients and kafkajs put it in, for every partition count', () => {
    for (const count of [1, 3, 6, 24, 100]) {
      for (let i = 0; i < 500; i += 1) {
        const key = `tenant-${i}-ü`;
        expect(choose({ topic: 't', partitionMetadata: partitions(count), message: { key, value: 'v' } })).toBe(
          byKey({ topic: 't', partitionMetadata: partitions(count), message: { key, value: 'v' } }),
        );
      }
    }
  });

  it('leaves a record with no key to the client, which goes round the partitions', () => {
    expect(choose({ topic: 't', partitionMetadata: partitions(6), message: { key: null, value: 'v' } })).toBeUndefined();
  });

  it('spreads one tenant’s calls over every partition evenly', () => {
    const counts = new Array<number>(6).fill(0);
    for (let i = 0; i < 6_000; i += 1) {
      const p = choose({
        topic: 'gatehouse.execute',
        partitionMetadata: partitions(6),
        message: { key: 'tenant-a', value: 'v', headers: { [PARTITION_KEY_HEADER]: `cmd_${i}` } },
      });
      if (p === undefined) throw new Error('a keyed record got no partition');
      counts[p] = (counts[p] ?? 0) + 1;
    }
    // An even share is 1,000; murmur2 over distinct ids keeps every partition within 10% of it.
    for (const n of counts) expect(Math.abs(n - 1_000)).toBeLessThan(100);
  });
});
