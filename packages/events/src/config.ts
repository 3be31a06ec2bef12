import { EventsError } from './events-error.js';

export interface TopicSettings {
  readonly partitions: number;
  /**
   * Partitions of the results topic (default: `partitions`). Each agent-runtime instance reads the
   * one its answers are routed to, so this bounds how many instances read only their own answers.
   */
  readonly resultsPartitions?: number;
  readonly replicationFactor: number;
  readonly retentionMs: number;
  readonly dlqRetentionMs: number;
  /** Largest record a topic accepts; commands above the argument limit must still arrive to be refused. */
  readonly maxMessageBytes: number;
}

/** The SASL mechanisms a client can authenticate with, as KAFKA_SASL_MECHANISM names them. */
const SASL_MECHANISMS = ['scram-sha-256', 'scram-sha-512', 'plain'] as const;
export type SaslMechanism = (typeof SASL_MECHANISMS)[number];

/** Who a client is to the brokers: each Gatehouse service has a principal of its own (docs/kafka-security.md). */
interface KafkaSasl {
  readonly mechanism: SaslMechanism;
  readonly username: string;
  /** Never logged, never echoed in a refusal. */
  readonly password: string;
}

export interface EventsConfig {
  readonly brokers: readonly string[];
  readonly registryUrl: string;
  readonly topicPrefix: string;
  readonly topicSettings: TopicSettings;
  /** Absent: the brokers' listener asks for no authentication. */
  readonly sasl?: KafkaSasl;
  /** True: TLS to the brokers, trusting Node's CAs (plus `NODE_EXTRA_CA_CERTS`). Absent: plaintext. */
  readonly ssl?: boolean;
}

export const EVENTS_ENV_DEFAULTS = {
  KAFKA_BROKERS: '127.0.0.1:9092',
  SCHEMA_REGISTRY_URL: 'http://127.0.0.1:8081/apis/ccompat/v7',
  GATEHOUSE_TOPIC_PREFIX: '',
  GATEHOUSE_TOPIC_PARTITIONS: '6',
  GATEHOUSE_RESULTS_PARTITIONS: '24',
  GATEHOUSE_TOPIC_REPLICATION: '1',
  GATEHOUSE_TOPIC_RETENTION_MS: String(7 * 24 * 3600 * 1000),
  GATEHOUSE_DLQ_RETENTION_MS: String(14 * 24 * 3600 * 1000),
  GATEHOUSE_MAX_MESSAGE_BYTES: String(4 * 1024 * 1024),
  KAFKA_SSL: 'false',
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
  const list = raw
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b.length > 0);
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

function optional(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** `A is` or `A and B are`, for a refusal that names variables. */
function listed(names: readonly string[]): string {
  return names.length === 1 ? `${names[0]} is` : `${names.join(' and ')} are`;
}

/**
 * The SASL credentials, if any. A mechanism needs a username and a password, and credentials need
 * a mechanism: either half alone would fail later, at the broker, with a less clear error.
 */
function sasl(env: Env): KafkaSasl | undefined {
  const mechanism = optional(env, 'KAFKA_SASL_MECHANISM');
  const credentials = {
    KAFKA_SASL_USERNAME: optional(env, 'KAFKA_SASL_USERNAME'),
    KAFKA_SASL_PASSWORD: optional(env, 'KAFKA_SASL_PASSWORD'),
  };
  const set = Object.entries(credentials)
    .filter(([, value]) => value !== undefined)
    .map(([name]) => name);
  if (mechanism === undefined) {
    if (set.length === 0) return undefined;
    throw new EventsError('CONFIG_INVALID', `${listed(set)} set but KAFKA_SASL_MECHANISM is not (one of ${SASL_MECHANISMS.join(', ')})`);
  }
  const known = SASL_MECHANISMS.find((m) => m === mechanism);
  if (known === undefined) {
    throw new EventsError('CONFIG_INVALID', `KAFKA_SASL_MECHANISM must be one of ${SASL_MECHANISMS.join(', ')}, got "${mechanism}"`);
  }
  const { KAFKA_SASL_USERNAME: username, KAFKA_SASL_PASSWORD: password } = credentials;
  if (username === undefined || password === undefined) {
    const missing = Object.keys(credentials).filter((name) => !set.includes(name));
    throw new EventsError('CONFIG_INVALID', `${listed(missing)} required when KAFKA_SASL_MECHANISM is set`);
  }
  return { mechanism: known, username, password };
}

function ssl(env: Env): boolean {
  const raw = read(env, 'KAFKA_SSL');
  if (raw !== 'true' && raw !== 'false') throw new EventsError('CONFIG_INVALID', `KAFKA_SSL must be true or false, got "${raw}"`);
  return raw === 'true';
}

/**
 * Reads and checks the event settings once, at start-up. The services read the same variables
 * through @gatehouse/runtime's schema; this reader serves what must not depend on the runtime
 * (the agent client, the CLI, scripts). A runtime test holds the two readers together.
 */
export function eventsConfigFromEnv(env: Env = process.env): EventsConfig {
  const auth = sasl(env);
  return {
    brokers: brokers(env),
    registryUrl: registryUrl(env),
    topicPrefix: read(env, 'GATEHOUSE_TOPIC_PREFIX'),
    topicSettings: {
      partitions: positiveInt(env, 'GATEHOUSE_TOPIC_PARTITIONS'),
      resultsPartitions: positiveInt(env, 'GATEHOUSE_RESULTS_PARTITIONS'),
      replicationFactor: positiveInt(env, 'GATEHOUSE_TOPIC_REPLICATION'),
      retentionMs: positiveInt(env, 'GATEHOUSE_TOPIC_RETENTION_MS'),
      dlqRetentionMs: positiveInt(env, 'GATEHOUSE_DLQ_RETENTION_MS'),
      maxMessageBytes: positiveInt(env, 'GATEHOUSE_MAX_MESSAGE_BYTES'),
    },
    ...(auth === undefined ? {} : { sasl: auth }),
    ...(ssl(env) ? { ssl: true } : {}),
  };
}
