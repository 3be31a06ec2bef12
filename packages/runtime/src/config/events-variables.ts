import { EVENTS_ENV_DEFAULTS } from '@gatehouse/events';
import { hostPortList, integer, oneOf, text, url } from './value-kind.js';
import { variable } from './variable.js';

// Defaults come from @gatehouse/events, whose eventsConfigFromEnv still serves the client and the CLI.
const KAFKA = ['policy', 'executor', 'approval', 'mcp', 'provision', 'cli', 'client'] as const;
const TOPICS = ['policy', 'executor', 'approval', 'provision'] as const;

/** Kafka, the schema registry and the topics every service provisions at start. */
export const EVENTS_VARIABLES = {
  KAFKA_BROKERS: variable(hostPortList(), {
    readers: KAFKA,
    default: EVENTS_ENV_DEFAULTS.KAFKA_BROKERS,
    doc: 'Kafka bootstrap brokers',
  }),
  KAFKA_SASL_MECHANISM: variable(oneOf(['scram-sha-256', 'scram-sha-512', 'plain']), {
    readers: KAFKA,
    unset: 'no authentication',
    doc: 'SASL mechanism this program authenticates to the brokers with; needs `KAFKA_SASL_USERNAME` and `KAFKA_SASL_PASSWORD` (docs/kafka-security.md)',
  }),
  KAFKA_SASL_USERNAME: variable(text(), {
    readers: KAFKA,
    unset: '*(required with `KAFKA_SASL_MECHANISM`)*',
    doc: 'the Kafka principal this program is (`User:<name>`): one per service, each with only the ACLs it needs',
  }),
  KAFKA_SASL_PASSWORD: variable(text(), {
    readers: KAFKA,
    unset: '*(required with `KAFKA_SASL_MECHANISM`)*',
    secret: true,
    doc: "that principal's password (SCRAM or PLAIN)",
  }),
  KAFKA_SSL: variable(oneOf(['true', 'false']), {
    readers: KAFKA,
    default: EVENTS_ENV_DEFAULTS.KAFKA_SSL,
    doc: "TLS to the brokers, trusting Node's CAs and `NODE_EXTRA_CA_CERTS`",
  }),
  SCHEMA_REGISTRY_URL: variable(url({ schemes: ['http', 'https'], trimTrailingSlash: true }), {
    readers: KAFKA,
    default: EVENTS_ENV_DEFAULTS.SCHEMA_REGISTRY_URL,
    doc: 'any Confluent-compatible schema registry (Apicurio: append `/apis/ccompat/v7`); trailing slashes are dropped',
  }),
  GATEHOUSE_TOPIC_PREFIX: variable(text(), {
    readers: KAFKA,
    default: EVENTS_ENV_DEFAULTS.GATEHOUSE_TOPIC_PREFIX,
    doc: 'prefix of every topic name and of the default consumer group ids, so deployments can share a cluster',
  }),
  GATEHOUSE_TOPIC_PARTITIONS: variable(integer(1), {
    readers: TOPICS,
    default: EVENTS_ENV_DEFAULTS.GATEHOUSE_TOPIC_PARTITIONS,
    doc: 'partitions of each topic created; caps how many instances share the work (partitions are only ever added)',
  }),
  GATEHOUSE_RESULTS_PARTITIONS: variable(integer(1), {
    readers: TOPICS,
    default: EVENTS_ENV_DEFAULTS.GATEHOUSE_RESULTS_PARTITIONS,
    doc: 'partitions of the results topic created; each agent-runtime instance reads only the partition its answers are routed to, so keep it at or above the number of instances',
  }),
  GATEHOUSE_TOPIC_REPLICATION: variable(integer(1), {
    readers: TOPICS,
    default: EVENTS_ENV_DEFAULTS.GATEHOUSE_TOPIC_REPLICATION,
    doc: 'replication factor of each topic created',
  }),
  GATEHOUSE_ANSWER_TRANSACTIONS: variable(oneOf(['auto', 'off']), {
    readers: ['policy', 'executor'],
    default: 'auto',
    doc: '`auto`: answers go out on the results topic in Kafka transactions wherever its partitions have 2 or more replicas (one result record per command for a read_committed subscriber), plainly on one replica; `off`: always plainly, for brokers without transactions or ACLs without transactional ids (docs/kafka-security.md), where a stalled executor can add a second, identical record',
  }),
  GATEHOUSE_TOPIC_RETENTION_MS: variable(integer(1), {
    readers: TOPICS,
    default: EVENTS_ENV_DEFAULTS.GATEHOUSE_TOPIC_RETENTION_MS,
    defaultText: `\`${EVENTS_ENV_DEFAULTS.GATEHOUSE_TOPIC_RETENTION_MS}\` (7 days)`,
    doc: 'retention of each topic created',
  }),
  GATEHOUSE_DLQ_RETENTION_MS: variable(integer(1), {
    readers: TOPICS,
    default: EVENTS_ENV_DEFAULTS.GATEHOUSE_DLQ_RETENTION_MS,
    defaultText: `\`${EVENTS_ENV_DEFAULTS.GATEHOUSE_DLQ_RETENTION_MS}\` (14 days)`,
    doc: 'retention of each dead-letter topic created',
  }),
  GATEHOUSE_MAX_MESSAGE_BYTES: variable(integer(1), {
    readers: TOPICS,
    default: EVENTS_ENV_DEFAULTS.GATEHOUSE_MAX_MESSAGE_BYTES,
    doc: 'largest record a topic accepts (commands over the argument limit must still arrive to be refused)',
  }),
  GATEHOUSE_SCHEMAS_DIR: variable(text(), {
    readers: KAFKA,
    unset: "the installation's `schemas/`",
    doc: 'directory of the Avro event schemas (read by @gatehouse/events when a serde starts)',
  }),
};
