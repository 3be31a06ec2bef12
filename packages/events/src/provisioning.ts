import type { Admin, ITopicConfig } from 'kafkajs';
import type { TopicSettings } from './config.js';
import { dlqTopicOf, TOPIC_ROLES } from './topics.js';
import type { Topics } from './topics.js';

export interface ProvisionResult {
  readonly created: readonly string[];
  readonly existing: readonly string[];
}

/** Creates every Gatehouse topic and its DLQ that does not exist yet; existing topics are left as they are. */
export async function provisionTopics(admin: Admin, topics: Topics, settings: TopicSettings): Promise<ProvisionResult> {
  const wanted: ITopicConfig[] = [];
  for (const role of TOPIC_ROLES) {
    const topic = topics[role];
    wanted.push(topicConfig(topic, settings, settings.retentionMs));
    wanted.push(topicConfig(dlqTopicOf(topic), settings, settings.dlqRetentionMs));
  }
  const present = new Set(await admin.listTopics());
  const missing = wanted.filter((t) => !present.has(t.topic));
  if (missing.length > 0) {
    await admin.createTopics({ topics: missing, waitForLeaders: true });
  }
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
