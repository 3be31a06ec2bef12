import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { generateSigningKey } from '@gatehouse/events';
import { generateSealingKey } from '@gatehouse/identity';
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

describe('the MCP front door’s sign-in and token exchange', () => {
  const SIGN_IN = {
    ...BASE,
    GATEHOUSE_OIDC_ISSUER: 'https://idp.example/realms/acme',
    MCP_AGENT_POLICY_FILE: fileURLToPath(new URL('../../../examples/customer-support/pack/config/agent-policy.json', import.meta.url)),
    MCP_PUBLIC_URL: 'https://mcp.example',
  };

  it('keeps no person’s token without the exchange client, and needs the executors’ sealing keys with it', () => {
    expect(mcpConfigFromEnv(SIGN_IN).signIn?.delegation).toBeUndefined();
    expect(() => mcpConfigFromEnv({ ...SIGN_IN, GATEHOUSE_EXCHANGE_CLIENT_ID: 'gatehouse-executor' })).toThrow(
      /GATEHOUSE_SEALING_KEYS: required with GATEHOUSE_EXCHANGE_CLIENT_ID and MCP_AGENT_POLICY_FILE/,
    );
    const delegation = mcpConfigFromEnv({
      ...SIGN_IN,
      GATEHOUSE_EXCHANGE_CLIENT_ID: 'gatehouse-executor',
      GATEHOUSE_SEALING_KEYS: generateSealingKey('unit-seal').sealingKey,
    }).signIn?.delegation;
    expect(delegation?.clientId).toBe('gatehouse-executor');
    expect([...(delegation?.sealingKeys.keys() ?? [])]).toEqual(['unit-seal']);
  });
});
