import { describe, expect, it } from 'vitest';
import { Partitioners } from 'kafkajs';
import type { PartitionMetadata } from 'kafkajs';
import { replyAwarePartitioner } from '@gatehouse/events';

const partitions = (n: number): PartitionMetadata[] =>
  Array.from({ length: n }, (_, partitionId) => ({ partitionId, leader: 1, replicas: [1], isr: [1], partitionErrorCode: 0, offlineReplicas: [] }));

describe('the reply-aware partitioner', () => {
  const choose = replyAwarePartitioner('gatehouse.results')();
  const byKey = Partitioners.DefaultPartitioner();
  const message = (headers: Record<string, string>) => ({ key: 'run_1', value: 'v', headers });

  it('sends a result to the reply partition its command named', () => {
    expect(choose({ topic: 'gatehouse.results', partitionMetadata: partitions(24), message: message({ 'gatehouse-reply-partition': '17' }) })).toBe(17);
  });

  it('partitions by key on every other topic, and for a reply partition the topic does not have', () => {
    const keyed = byKey({ topic: 'gatehouse.execute', partitionMetadata: partitions(24), message: message({}) });
    expect(choose({ topic: 'gatehouse.execute', partitionMetadata: partitions(24), message: message({ 'gatehouse-reply-partition': '17' }) })).toBe(keyed);
    expect(choose({ topic: 'gatehouse.results', partitionMetadata: partitions(24), message: message({ 'gatehouse-reply-partition': '24' }) })).toBe(keyed);
    expect(choose({ topic: 'gatehouse.results', partitionMetadata: partitions(24), message: message({ 'gatehouse-reply-partition': 'seven' }) })).toBe(keyed);
    expect(choose({ topic: 'gatehouse.results', partitionMetadata: partitions(24), message: message({}) })).toBe(keyed);
  });
});
