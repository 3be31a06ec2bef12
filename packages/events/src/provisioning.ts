import type { KafkaAdmin, TopicSpec } from './kafka-admin.js';
import { kafkaErrorCodes } from './kafka-errors.js';
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
 * another process is still creating — so whatever runs next can use them at once. A topic still
 * missing after TOPICS_WAIT_MS fails the start with TOPICS_MISSING, naming it.
 */
export async function provisionTopics(admin: KafkaAdmin, topics: Topics, settings: TopicSettings): Promise<ProvisionResult> {
  const wanted: TopicSpec[] = [];
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

function topicConfig(topic: string, settings: TopicSettings, retentionMs: number): TopicSpec {
  return {
    topic,
    partitions: settings.partitions,
    replicationFactor: settings.replicationFactor,
    configs: [
      { name: 'retention.ms', value: String(retentionMs) },
      { name: 'max.message.bytes', value: String(settings.maxMessageBytes) },
    ],
  };
}

/**
 * Creates topics. Another process may create some of them at the same moment, and right after a
 * creation the broker can still answer UNKNOWN_TOPIC_OR_PARTITION or LEADER_NOT_AVAILABLE: those
 * pass within moments, so the topics still missing are asked for again. A principal that may not
 * create topics leaves them to the one that provisions them. Either way the caller then waits,
 * bounded, until every topic is there: a refusal here is never the reason a start fails.
 */
async function createWithRetry(admin: KafkaAdmin, topics: TopicSpec[]): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await admin.createTopics(topics);
      return;
    } catch (error) {
      const codes = kafkaErrorCodes(error);
      if (codes.some((code) => LEFT_TO_OTHERS.has(code))) return;
      if (!codes.some((code) => PASSING.has(code))) throw error;
      if (attempt >= 5) return;
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      const present = new Set(await admin.listTopics());
      topics = topics.filter((t) => !present.has(t.topic));
      if (topics.length === 0) return;
    }
  }
}

const PASSING = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE', 'TOPIC_ALREADY_EXISTS']);
/** Refusals that mean another principal provisions the topics (the provision job, under ACLs). */
const LEFT_TO_OTHERS = new Set(['TOPIC_AUTHORIZATION_FAILED', 'CLUSTER_AUTHORIZATION_FAILED']);
