import { describe, expect, it } from 'vitest';
import { generateSigningKey } from '@gatehouse/events';
import { mcpConfigFromEnv } from '@gatehouse/mcp';

const BASE = {
  GATEHOUSE_CONTROL_TOKEN: 'control-token-0123456789abcdef',
  GATEHOUSE_POLICY_KEYS: generateSigningKey('unit-policy').trustedKey,
  GATEHOUSE_APPROVAL_KEYS: generateSigningKey('unit-approval').trustedKey,
  GATEHOUSE_EXECUTOR_KEYS: generateSigningKey('unit-executor').trustedKey,
};

describe('the MCP front door’s Kafka identity', () => {
  it('refuses to start without the keys of every service that answers, and refuses one key id under two roles', () => {
    expect(() => mcpConfigFromEnv({ GATEHOUSE_CONTROL_TOKEN: BASE.GATEHOUSE_CONTROL_TOKEN })).toThrow(
      /GATEHOUSE_POLICY_KEYS: required.*GATEHOUSE_APPROVAL_KEYS: required.*GATEHOUSE_EXECUTOR_KEYS: required/,
    );
    expect(() => mcpConfigFromEnv({ ...BASE, GATEHOUSE_EXECUTOR_KEYS: BASE.GATEHOUSE_POLICY_KEYS })).toThrow(
      /listed for both the policy and the executor service/,
    );
  });

  it('signs in to the brokers with its own SASL principal when one is configured', () => {
    const config = mcpConfigFromEnv({
      ...BASE,
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'gatehouse-mcp',
      KAFKA_SASL_PASSWORD: 'mcp-secret',
      KAFKA_SSL: 'true',
    });
    expect(config.events.sasl).toEqual({ mechanism: 'scram-sha-512', username: 'gatehouse-mcp', password: 'mcp-secret' });
    expect(config.events.ssl).toBe(true);
  });

  it('connects without SASL when none is configured, and refuses half a setting', () => {
    expect(mcpConfigFromEnv(BASE).events.sasl).toBeUndefined();
    expect(() => mcpConfigFromEnv({ ...BASE, KAFKA_SASL_MECHANISM: 'scram-sha-512' })).toThrow(/KAFKA_SASL_USERNAME/);
  });
});
