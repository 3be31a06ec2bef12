import type { Admin, ITopicConfig } from 'kafkajs';
import type { TopicSettings } from './config.js';
import { awaitTopicsServed } from './topic-readiness.js';
import { dlqTopicOf, TOPIC_ROLES } from './topics.js';
import type { Topics } from './topics.js';

export interface ProvisionResult {
  readonly created: readonly string[];
  readonly existing: readonly string[];
}

/**
 * Creates every Gatehouse topic and its DLQ that does not exist yet (existing topics are left as
 * they are), and resolves once every partition of all of them is served by its leader — also those
 * another process created a moment ago — so whatever runs next can use them at once.
 */
export async function provisionTopics(admin: Admin, topics: Topics, settings: TopicSettings): Promise<ProvisionResult> {
  const wanted: ITopicConfig[] = [];
  for (const role of TOPIC_ROLES) {
    const topic = topics[role];
    const partitions = role === 'results' ? (settings.resultsPartitions ?? settings.partitions) : settings.partitions;
    wanted.push(topicConfig(topic, { ...settings, partitions }, settings.retentionMs));
    wanted.push(topicConfig(dlqTopicOf(topic), settings, settings.dlqRetentionMs));
  }
  const present = new Set(await admin.listTopics());
  const missing = wanted.filter((t) => !present.has(t.topic));
  if (missing.length > 0) await createWithRetry(admin, missing);
  await awaitTopicsServed(
    admin,
    wanted.map((t) => t.topic),
  );
  return {
    created: missing.map((t) => t.topic),
    existing: wanted.filter((t) => present.has(t.topic)).map((t) => t.topic),
  };
}

function topicConfig(topic: string, settings: TopicSettings, retentionMs: number): ITopicConfig {
  return {
    topic,
    numPartitions: settings.partitions,
    replicationFactor: settings.replicationFactor,
    configEntries: [
      { name: 'retention.ms', value: String(retentionMs) },
      { name: 'max.message.bytes', value: String(settings.maxMessageBytes) },
    ],
  };
}

/**
 * Creates topics and waits for their leaders. Right after creation the broker can still answer
 * UNKNOWN_TOPIC_OR_PARTITION for the new partitions; that passes within moments, so ask again.
 */
async function createWithRetry(admin: Admin, topics: ITopicConfig[]): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await admin.createTopics({ topics, waitForLeaders: true });
      return;
    } catch (error) {
      const type = (error as { type?: string }).type;
      if (attempt >= 5 || (type !== 'UNKNOWN_TOPIC_OR_PARTITION' && type !== 'LEADER_NOT_AVAILABLE')) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      const present = new Set(await admin.listTopics());
      topics = topics.filter((t) => !present.has(t.topic));
      if (topics.length === 0) return;
    }
  }
}
