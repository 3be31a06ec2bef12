import { describe, expect, it } from 'vitest';
import { eventsConfigFromEnv } from '@gatehouse/events';
import type { EventsConfig } from '@gatehouse/events';
import { ConfigError, eventsConfigOf, readConfig } from '@gatehouse/runtime';
import type { Env, EventsVariableName } from '@gatehouse/runtime';

// The services read these variables through @gatehouse/runtime's schema, the client, the CLI and
// the scripts through eventsConfigFromEnv: both readers must accept and refuse the same settings.
const EVENTS_NAMES: readonly EventsVariableName[] = [
  'KAFKA_BROKERS',
  'KAFKA_SASL_MECHANISM',
  'KAFKA_SASL_USERNAME',
  'KAFKA_SASL_PASSWORD',
  'KAFKA_SSL',
  'SCHEMA_REGISTRY_URL',
  'GATEHOUSE_TOPIC_PREFIX',
  'GATEHOUSE_TOPIC_PARTITIONS',
  'GATEHOUSE_RESULTS_PARTITIONS',
  'GATEHOUSE_TOPIC_REPLICATION',
  'GATEHOUSE_TOPIC_RETENTION_MS',
  'GATEHOUSE_DLQ_RETENTION_MS',
  'GATEHOUSE_MAX_MESSAGE_BYTES',
];

const PASSWORD = 'pw-that-must-never-appear-in-a-message';

const readers: ReadonlyArray<[string, (env: Env) => EventsConfig]> = [
  ['eventsConfigFromEnv', (env) => eventsConfigFromEnv(env)],
  ['the services’ schema', (env) => eventsConfigOf(readConfig(EVENTS_NAMES, env))],
];

function refusal(read: (env: Env) => EventsConfig, env: Env): Error & { code?: string } {
  try {
    read(env);
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error(`${JSON.stringify(Object.keys(env))} was accepted`);
}

describe.each(readers)('Kafka authentication settings read by %s', (_name, read) => {
  it('asks for no authentication and no TLS when nothing is set', () => {
    const config = read({});
    expect(config.sasl).toBeUndefined();
    expect(config.ssl).toBeUndefined();
    expect(read({ KAFKA_SASL_MECHANISM: '', KAFKA_SASL_USERNAME: '', KAFKA_SASL_PASSWORD: '', KAFKA_SSL: '' }).sasl).toBeUndefined();
  });

  it.each(['scram-sha-256', 'scram-sha-512', 'plain'])('authenticates with %s as the named principal', (mechanism) => {
    const config = read({ KAFKA_SASL_MECHANISM: mechanism, KAFKA_SASL_USERNAME: 'gatehouse-executor', KAFKA_SASL_PASSWORD: PASSWORD });
    expect(config.sasl).toEqual({ mechanism, username: 'gatehouse-executor', password: PASSWORD });
  });

  it('turns TLS on only for KAFKA_SSL=true', () => {
    expect(read({ KAFKA_SSL: 'true' }).ssl).toBe(true);
    expect(read({ KAFKA_SSL: 'false' }).ssl).toBeUndefined();
  });

  it.each<[Env, RegExp]>([
    [{ KAFKA_SASL_MECHANISM: 'scram-sha-512' }, /KAFKA_SASL_USERNAME.*KAFKA_SASL_PASSWORD|KAFKA_SASL_PASSWORD.*KAFKA_SASL_USERNAME/],
    [{ KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_PASSWORD: PASSWORD }, /KAFKA_SASL_USERNAME/],
    [{ KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'gatehouse-agent' }, /KAFKA_SASL_PASSWORD/],
    [{ KAFKA_SASL_USERNAME: 'gatehouse-agent', KAFKA_SASL_PASSWORD: PASSWORD }, /KAFKA_SASL_MECHANISM/],
    [
      { KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512', KAFKA_SASL_USERNAME: 'gatehouse-agent', KAFKA_SASL_PASSWORD: PASSWORD },
      /KAFKA_SASL_MECHANISM.*scram-sha-512/,
    ],
    [{ KAFKA_SASL_MECHANISM: 'gssapi', KAFKA_SASL_USERNAME: 'gatehouse-agent', KAFKA_SASL_PASSWORD: PASSWORD }, /KAFKA_SASL_MECHANISM/],
    [{ KAFKA_SSL: 'yes' }, /KAFKA_SSL/],
  ])('refuses %j at start-up with CONFIG_INVALID, naming the variable', (env, names) => {
    const error = refusal(read, env);
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toMatch(names);
  });

  it('never echoes the password in a refusal', () => {
    for (const env of [
      { KAFKA_SASL_PASSWORD: PASSWORD },
      { KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_PASSWORD: PASSWORD },
      { KAFKA_SASL_MECHANISM: 'nope', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: PASSWORD },
    ]) {
      const error = refusal(read, env);
      expect(error.message).toMatch(/KAFKA_SASL_/);
      expect(`${error.message} ${JSON.stringify(error)}`).not.toContain(PASSWORD);
    }
  });
});

describe('the two readers of the Kafka authentication settings', () => {
  it.each<Env>([
    {},
    { KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'gatehouse-policy', KAFKA_SASL_PASSWORD: PASSWORD, KAFKA_SSL: 'true' },
    {
      KAFKA_SASL_MECHANISM: 'plain',
      KAFKA_SASL_USERNAME: 'svc',
      KAFKA_SASL_PASSWORD: PASSWORD,
      KAFKA_SSL: 'false',
      KAFKA_BROKERS: 'k1:9093',
    },
  ])('read %j to the same settings', (env) => {
    expect(eventsConfigOf(readConfig(EVENTS_NAMES, env))).toEqual(eventsConfigFromEnv(env));
  });

  it('names each missing credential in the services’ refusal', () => {
    const error = refusal((env) => eventsConfigOf(readConfig(EVENTS_NAMES, env)), { KAFKA_SASL_MECHANISM: 'scram-sha-512' });
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).refusals.map((r) => r.variable)).toEqual(['KAFKA_SASL_USERNAME', 'KAFKA_SASL_PASSWORD']);
  });
});
