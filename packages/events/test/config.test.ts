import { describe, expect, it } from 'vitest';
import { dlqTopicOf, eventsConfigFromEnv, subjectOf, topicNames } from '@gatehouse/events';

describe('event settings from the environment', () => {
  it('defaults to the local stack', () => {
    const config = eventsConfigFromEnv({});
    expect(config.brokers).toEqual(['127.0.0.1:9092']);
    expect(config.registryUrl).toBe('http://127.0.0.1:8081/apis/ccompat/v7');
    expect(config.topicSettings).toEqual({
      partitions: 6,
      resultsPartitions: 24,
      replicationFactor: 1,
      retentionMs: 604_800_000,
      dlqRetentionMs: 1_209_600_000,
      maxMessageBytes: 4_194_304,
    });
  });

  it('takes a user cluster, trimming the registry URL', () => {
    const config = eventsConfigFromEnv({
      KAFKA_BROKERS: 'k1:9092, k2:9093',
      SCHEMA_REGISTRY_URL: 'https://sr.internal/',
      GATEHOUSE_TOPIC_PARTITIONS: '24',
    });
    expect(config.brokers).toEqual(['k1:9092', 'k2:9093']);
    expect(config.registryUrl).toBe('https://sr.internal');
    expect(config.topicSettings.partitions).toBe(24);
  });

  it.each([
    [{ KAFKA_BROKERS: 'no-port' }, /host:port/],
    [{ SCHEMA_REGISTRY_URL: 'not a url' }, /not a URL/],
    [{ SCHEMA_REGISTRY_URL: 'ftp://x' }, /http/],
    [{ GATEHOUSE_TOPIC_PARTITIONS: '0' }, /positive integer/],
  ])('refuses %j with CONFIG_INVALID', (env, message) => {
    expect(() => eventsConfigFromEnv(env)).toThrowError(message);
    try {
      eventsConfigFromEnv(env);
    } catch (error) {
      expect((error as { code?: string }).code).toBe('CONFIG_INVALID');
    }
  });

  it('names topics under a prefix, with DLQs and TopicNameStrategy subjects', () => {
    const topics = topicNames('staging.');
    expect(topics.commands).toBe('staging.gatehouse.commands');
    expect(topics.approvalsRequested).toBe('staging.gatehouse.approvals.requested');
    expect(dlqTopicOf(topics.results)).toBe('staging.gatehouse.results.dlq');
    expect(subjectOf(topics.execute)).toBe('staging.gatehouse.execute-value');
  });
});
