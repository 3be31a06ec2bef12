import type { EventsConfig } from '@gatehouse/events';
import type { Config } from './variables.js';

/** The schema's names that make an EventsConfig. */
export type EventsVariableName =
  | 'KAFKA_BROKERS'
  | 'SCHEMA_REGISTRY_URL'
  | 'GATEHOUSE_TOPIC_PREFIX'
  | 'GATEHOUSE_TOPIC_PARTITIONS'
  | 'GATEHOUSE_TOPIC_REPLICATION'
  | 'GATEHOUSE_TOPIC_RETENTION_MS'
  | 'GATEHOUSE_DLQ_RETENTION_MS'
  | 'GATEHOUSE_MAX_MESSAGE_BYTES';

/** The event settings, from variables already read by `readConfig`. */
export function eventsConfigOf(config: Config<EventsVariableName>): EventsConfig {
  return {
    brokers: config.KAFKA_BROKERS,
    registryUrl: config.SCHEMA_REGISTRY_URL,
    topicPrefix: config.GATEHOUSE_TOPIC_PREFIX,
    topicSettings: {
      partitions: config.GATEHOUSE_TOPIC_PARTITIONS,
      replicationFactor: config.GATEHOUSE_TOPIC_REPLICATION,
      retentionMs: config.GATEHOUSE_TOPIC_RETENTION_MS,
      dlqRetentionMs: config.GATEHOUSE_DLQ_RETENTION_MS,
      maxMessageBytes: config.GATEHOUSE_MAX_MESSAGE_BYTES,
    },
  };
}
