import { EventsError } from './events-error.js';

export interface TopicSettings {
  readonly partitions: number;
  readonly replicationFactor: number;
  readonly retentionMs: number;
  readonly dlqRetentionMs: number;
  /** Largest record a topic accepts; commands above the argument limit must still arrive to be refused. */
  readonly maxMessageBytes: number;
}

export interface EventsConfig {
  readonly brokers: readonly string[];
  readonly registryUrl: string;
  readonly topicPrefix: string;
  readonly topicSettings: TopicSettings;
}

export const EVENTS_ENV_DEFAULTS = {
  KAFKA_BROKERS: '127.0.0.1:9092',
  SCHEMA_REGISTRY_URL: 'http://127.0.0.1:8081/apis/ccompat/v7',
  GATEHOUSE_TOPIC_PREFIX: '',
  GATEHOUSE_TOPIC_PARTITIONS: '6',
  GATEHOUSE_TOPIC_REPLICATION: '1',
  GATEHOUSE_TOPIC_RETENTION_MS: String(7 * 24 * 3600 * 1000),
  GATEHOUSE_DLQ_RETENTION_MS: String(14 * 24 * 3600 * 1000),
  GATEHOUSE_MAX_MESSAGE_BYTES: String(4 * 1024 * 1024),
} as const;

type Env = Readonly<Record<string, string | undefined>>;

function read(env: Env, name: keyof typeof EVENTS_ENV_DEFAULTS): string {
  const value = env[name];
  return value === undefined || value === '' ? EVENTS_ENV_DEFAULTS[name] : value;
}

function positiveInt(env: Env, name: keyof typeof EVENTS_ENV_DEFAULTS): number {
  const raw = read(env, name);
  const value = Number(raw);
  // Decimal digits only, like @gatehouse/runtime's reader: `1e3`, `0x10` and ` 8 ` are refused.
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < 1) {
    throw new EventsError('CONFIG_INVALID', `${name} must be a positive integer, got "${raw}"`);
  }
  return value;
}

function brokers(env: Env): string[] {
  const raw = read(env, 'KAFKA_BROKERS');
  const list = raw.split(',').map((b) => b.trim()).filter((b) => b.length > 0);
  for (const broker of list) {
    if (!/^[^\s:]+:\d{1,5}$/.test(broker)) {
      throw new EventsError('CONFIG_INVALID', `KAFKA_BROKERS entries must be host:port, got "${broker}"`);
    }
  }
  if (list.length === 0) throw new EventsError('CONFIG_INVALID', 'KAFKA_BROKERS is empty');
  return list;
}

function registryUrl(env: Env): string {
  const raw = read(env, 'SCHEMA_REGISTRY_URL');
  let url: URL;
  try {
    url = new URL(raw);
  } catch (cause) {
    throw new EventsError('CONFIG_INVALID', `SCHEMA_REGISTRY_URL is not a URL: "${raw}"`, { cause });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new EventsError('CONFIG_INVALID', `SCHEMA_REGISTRY_URL must be http(s), got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

/**
 * Reads and checks the event settings once, at start-up. The services read the same variables
 * through @gatehouse/runtime's schema; this reader serves what must not depend on the runtime
 * (the agent client, the CLI, scripts). A runtime test holds the two readers together.
 */
export function eventsConfigFromEnv(env: Env = process.env): EventsConfig {
  return {
    brokers: brokers(env),
    registryUrl: registryUrl(env),
    topicPrefix: read(env, 'GATEHOUSE_TOPIC_PREFIX'),
    topicSettings: {
      partitions: positiveInt(env, 'GATEHOUSE_TOPIC_PARTITIONS'),
      replicationFactor: positiveInt(env, 'GATEHOUSE_TOPIC_REPLICATION'),
      retentionMs: positiveInt(env, 'GATEHOUSE_TOPIC_RETENTION_MS'),
      dlqRetentionMs: positiveInt(env, 'GATEHOUSE_DLQ_RETENTION_MS'),
      maxMessageBytes: positiveInt(env, 'GATEHOUSE_MAX_MESSAGE_BYTES'),
    },
  };
}
