import { describe, expect, it } from 'vitest';
import { mcpConfigFromEnv } from '@gatehouse/mcp';

const BASE = { GATEHOUSE_CONTROL_TOKEN: 'control-token-0123456789abcdef' };

describe('the MCP front door’s Kafka identity', () => {
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
