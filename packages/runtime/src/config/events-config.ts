import type { EventsConfig } from '@gatehouse/events';
import { ConfigError } from './config-error.js';
import type { Refusal } from './config-error.js';
import type { Config } from './variables.js';

/** The schema's names that make an EventsConfig. */
export type EventsVariableName =
  | 'KAFKA_BROKERS'
  | 'SCHEMA_REGISTRY_URL'
  | 'GATEHOUSE_TOPIC_PREFIX'
  | 'GATEHOUSE_TOPIC_PARTITIONS'
  | 'GATEHOUSE_RESULTS_PARTITIONS'
  | 'GATEHOUSE_TOPIC_REPLICATION'
  | 'GATEHOUSE_TOPIC_RETENTION_MS'
  | 'GATEHOUSE_DLQ_RETENTION_MS'
  | 'GATEHOUSE_MAX_MESSAGE_BYTES'
  | KafkaAccessVariableName;

/** The names that say how a program reaches the brokers: who it is and whether over TLS. */
type KafkaAccessVariableName = 'KAFKA_SASL_MECHANISM' | 'KAFKA_SASL_USERNAME' | 'KAFKA_SASL_PASSWORD' | 'KAFKA_SSL';

/**
 * The SASL credentials and TLS choice. A mechanism needs a username and a password, and either of
 * those needs a mechanism: half a setting would only fail later, at the broker, and less clearly.
 */
function kafkaAccessOf(config: Config<KafkaAccessVariableName>): Pick<EventsConfig, 'sasl' | 'ssl'> {
  const mechanism = config.KAFKA_SASL_MECHANISM;
  const { KAFKA_SASL_USERNAME: username, KAFKA_SASL_PASSWORD: password } = config;
  const credentials = { KAFKA_SASL_USERNAME: username, KAFKA_SASL_PASSWORD: password };
  const refusals: Refusal[] = Object.entries(credentials).flatMap(([variable, value]) => {
    if (mechanism === undefined && value !== undefined) return [{ variable, reason: 'set, but KAFKA_SASL_MECHANISM is not' }];
    if (mechanism !== undefined && value === undefined) return [{ variable, reason: 'required when KAFKA_SASL_MECHANISM is set' }];
    return [];
  });
  if (refusals.length > 0) throw new ConfigError(refusals);
  return {
    ...(mechanism === undefined || username === undefined || password === undefined ? {} : { sasl: { mechanism, username, password } }),
    ...(config.KAFKA_SSL === 'true' ? { ssl: true } : {}),
  };
}

/**
 * The event settings, from variables already read by `readConfig`. Throws ConfigError when the
 * SASL variables are set only in part.
 */
export function eventsConfigOf(config: Config<EventsVariableName>): EventsConfig {
  return {
    brokers: config.KAFKA_BROKERS,
    registryUrl: config.SCHEMA_REGISTRY_URL,
    topicPrefix: config.GATEHOUSE_TOPIC_PREFIX,
    topicSettings: {
      partitions: config.GATEHOUSE_TOPIC_PARTITIONS,
      resultsPartitions: config.GATEHOUSE_RESULTS_PARTITIONS,
      replicationFactor: config.GATEHOUSE_TOPIC_REPLICATION,
      retentionMs: config.GATEHOUSE_TOPIC_RETENTION_MS,
      dlqRetentionMs: config.GATEHOUSE_DLQ_RETENTION_MS,
      maxMessageBytes: config.GATEHOUSE_MAX_MESSAGE_BYTES,
    },
    ...kafkaAccessOf(config),
  };
}
