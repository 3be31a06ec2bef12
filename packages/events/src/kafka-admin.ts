import type { Admin } from '@platformatic/kafka';
import type { KafkaConnection } from './kafka-client.js';
import { wireClient } from './wire-client.js';

/** A partition's offsets: `offset` and `high` are its end (the next record's offset), `low` its first record's. */
export interface PartitionOffsets {
  readonly partition: number;
  readonly offset: string;
  readonly high: string;
  readonly low: string;
}

/** A topic to create: its partitions, replicas and topic-level configs. */
export interface TopicSpec {
  readonly topic: string;
  readonly partitions: number;
  readonly replicationFactor: number;
  readonly configs: readonly { readonly name: string; readonly value: string }[];
}

/** A partition's committed offset in a consumer group (-1 when the group committed none). */
export interface CommittedOffset {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

// ListOffsets' special timestamps: the partition's end and its start.
const LATEST = -1n;
const EARLIEST = -2n;

/**
 * The cluster operations Gatehouse makes (topics, their offsets, consumer groups), as the
 * connection's principal, through @platformatic/kafka's admin client.
 */
export class KafkaAdmin {
  private constructor(private readonly admin: Admin) {}

  /** Connects, failing here when the brokers cannot be reached or refuse the principal. */
  static async connect(kafka: KafkaConnection): Promise<KafkaAdmin> {
    const { Admin: WireAdmin } = await wireClient();
    const admin = new WireAdmin(kafka.wireOptions());
    try {
      await admin.metadata({ topics: [] });
    } catch (error) {
      await admin.close().catch(() => undefined);
      throw error;
    }
    return new KafkaAdmin(admin);
  }

  listTopics(): Promise<string[]> {
    return this.admin.listTopics();
  }

  /** Creates the topics, one request per set of configs (the request carries one set for all its topics). */
  async createTopics(specs: readonly TopicSpec[]): Promise<void> {
    const byConfigs = new Map<string, TopicSpec[]>();
    for (const spec of specs) {
      const key = JSON.stringify(spec.configs);
      byConfigs.set(key, [...(byConfigs.get(key) ?? []), spec]);
    }
    for (const group of byConfigs.values()) {
      await this.admin.createTopics({
        topics: group.map((spec) => ({ topic: spec.topic, partitions: spec.partitions, replicas: spec.replicationFactor })),
        configs: (group[0]?.configs ?? []).map((c) => ({ name: c.name, value: c.value })),
      });
    }
  }

  /** How many brokers the cluster names. */
  async brokerCount(): Promise<number> {
    return (await this.admin.metadata({ topics: [] })).brokers.size;
  }

  /** The fewest replicas any partition of `topics` has (0 when a topic has no partition the brokers name). */
  async leastReplicas(topics: readonly string[]): Promise<number> {
    const metadata = await this.admin.metadata({ topics: [...topics], forceUpdate: true });
    let least = Number.POSITIVE_INFINITY;
    for (const topic of topics) {
      const partitions = metadata.topics.get(topic)?.partitions ?? [];
      if (partitions.length === 0) return 0;
      for (const partition of partitions) least = Math.min(least, partition.replicas.length);
    }
    return Number.isFinite(least) ? least : 0;
  }

  /** The start and end of every partition of `topic`, from each partition's leader. */
  async topicOffsets(topic: string): Promise<PartitionOffsets[]> {
    const metadata = await this.admin.metadata({ topics: [topic], forceUpdate: true });
    const count = metadata.topics.get(topic)?.partitionsCount ?? 0;
    const ask = (timestamp: bigint) =>
      this.admin.listOffsets({
        topics: [{ name: topic, partitions: Array.from({ length: count }, (_, partitionIndex) => ({ partitionIndex, timestamp })) }],
      });
    const [ends, starts] = await Promise.all([ask(LATEST), ask(EARLIEST)]);
    const startOf = new Map(starts[0]?.partitions.map((p) => [p.partitionIndex, p.offset]) ?? []);
    return (ends[0]?.partitions ?? [])
      .map((p) => ({
        partition: p.partitionIndex,
        offset: String(p.offset),
        high: String(p.offset),
        low: String(startOf.get(p.partitionIndex) ?? 0n),
      }))
      .sort((a, b) => a.partition - b.partition);
  }

  /**
   * Where `partition` of `topic` holds records stamped at or after `timestampMs` (`from`: the first
   * such record, or the end when there is none) and where it ends now (`end`: the next record's offset).
   */
  async offsetsSince(topic: string, partition: number, timestampMs: number): Promise<{ readonly from: bigint; readonly end: bigint }> {
    const ask = (timestamp: bigint) =>
      this.admin.listOffsets({ topics: [{ name: topic, partitions: [{ partitionIndex: partition, timestamp }] }] });
    const [at, ends] = await Promise.all([ask(BigInt(Math.max(0, Math.floor(timestampMs)))), ask(LATEST)]);
    const end = ends[0]?.partitions[0]?.offset ?? 0n;
    const from = at[0]?.partitions[0]?.offset;
    return { from: from === undefined || from < 0n || from > end ? end : from, end };
  }

  /** The group's committed offsets on `topics` (a partition it never committed is missing). */
  async committedOffsets(groupId: string, topics: readonly string[]): Promise<CommittedOffset[]> {
    const [group] = await this.admin.listConsumerGroupOffsets({ groups: [groupId] });
    return (group?.topics ?? [])
      .filter((t) => topics.includes(t.name))
      .flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex, offset: String(p.committedOffset) })));
  }

  /** The ids of the cluster's consumer groups. */
  async listGroups(): Promise<string[]> {
    return [...(await this.admin.listGroups()).keys()];
  }

  /** How many members each named group has now. */
  async groupMembers(groupIds: readonly string[]): Promise<Map<string, number>> {
    const groups = await this.admin.describeGroups({ groups: [...groupIds] });
    return new Map([...groups].map(([id, group]) => [id, group.members.size]));
  }

  async deleteGroups(groupIds: readonly string[]): Promise<void> {
    await this.admin.deleteGroups({ groups: [...groupIds] });
  }

  async close(): Promise<void> {
    await this.admin.close();
  }
}
