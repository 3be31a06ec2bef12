import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { executorConfigFromEnv } from '@gatehouse/executor';
import { generateSigningKey } from '@gatehouse/events';
import { generateSealingKey } from '@gatehouse/identity';

// The executor needs the keys whose orders it runs; these tests read configuration only.
const TRUSTED = {
  GATEHOUSE_POLICY_KEYS: generateSigningKey('unit-policy').trustedKey,
  GATEHOUSE_APPROVAL_KEYS: generateSigningKey('unit-approval').trustedKey,
  GATEHOUSE_SIGNING_KEY: generateSigningKey('unit-executor').signingKey,
  GATEHOUSE_ASSERTION_KEY: generateSigningKey('unit-assertion').signingKey,
};

describe('executor configuration', () => {
  it('uses the documented defaults', () => {
    expect(executorConfigFromEnv(TRUSTED)).toMatchObject({
      redisPrefix: 'gh:',
      executorId: `${hostname()}-${process.pid}`,
      groupId: 'gatehouse-executor',
      concurrency: 64,
      perTenantConcurrency: 8,
      leaseMs: 5_000,
      answerTransactions: 'auto',
      sessionTimeoutMs: 10_000,
      proposalTtlMs: 900_000,
      limits: { tenantDefault: 8, tenants: {}, run: 4 },
      port: 8092,
      host: '127.0.0.1',
    });
  });

  it('publishes answers plainly when GATEHOUSE_ANSWER_TRANSACTIONS is off, and refuses any other word', () => {
    expect(executorConfigFromEnv({ ...TRUSTED, GATEHOUSE_ANSWER_TRANSACTIONS: 'off' }).answerTransactions).toBe('off');
    expect(() => executorConfigFromEnv({ ...TRUSTED, GATEHOUSE_ANSWER_TRANSACTIONS: 'on' })).toThrow(/GATEHOUSE_ANSWER_TRANSACTIONS/);
  });

  it('prefixes the default group with the topic prefix and takes an explicit one as is', () => {
    expect(executorConfigFromEnv({ ...TRUSTED, GATEHOUSE_TOPIC_PREFIX: 'staging.' }).groupId).toBe('staging.gatehouse-executor');
    expect(executorConfigFromEnv({ ...TRUSTED, GATEHOUSE_TOPIC_PREFIX: 'staging.', EXECUTOR_GROUP_ID: 'mine' }).groupId).toBe('mine');
  });

  it('treats empty values as unset, so GATEHOUSE_REDIS_PREFIX="" means gh: as in the approval service', () => {
    expect(
      executorConfigFromEnv({ ...TRUSTED, GATEHOUSE_REDIS_PREFIX: '', EXECUTOR_GROUP_ID: '', EXECUTOR_HOST: '', EXECUTOR_ID: '' }),
    ).toMatchObject({
      redisPrefix: 'gh:',
      groupId: 'gatehouse-executor',
      host: '127.0.0.1',
      executorId: `${hostname()}-${process.pid}`,
    });
  });

  it('reads per-tenant slot limits as a JSON object', () => {
    expect(executorConfigFromEnv({ ...TRUSTED, GATEHOUSE_TENANT_SLOT_LIMITS: '{"acme": 2, "globex": 16}' }).limits.tenants).toEqual({
      acme: 2,
      globex: 16,
    });
  });

  it('refuses malformed slot limits naming the variable, a JSON syntax error included', () => {
    expect(() => executorConfigFromEnv({ ...TRUSTED, GATEHOUSE_TENANT_SLOT_LIMITS: '{acme: 2}' })).toThrow(
      /GATEHOUSE_TENANT_SLOT_LIMITS: not a JSON object/,
    );
    expect(() => executorConfigFromEnv({ ...TRUSTED, GATEHOUSE_TENANT_SLOT_LIMITS: '[]' })).toThrow(
      /GATEHOUSE_TENANT_SLOT_LIMITS: not a JSON object \(got an array\)/,
    );
    expect(() => executorConfigFromEnv({ ...TRUSTED, GATEHOUSE_TENANT_SLOT_LIMITS: '{"acme": 0}' })).toThrow(
      /GATEHOUSE_TENANT_SLOT_LIMITS: the value of "acme"/,
    );
  });

  it('accepts ports 0..65535 and refuses the rest', () => {
    expect(executorConfigFromEnv({ ...TRUSTED, EXECUTOR_PORT: '0' }).port).toBe(0);
    expect(() => executorConfigFromEnv({ ...TRUSTED, EXECUTOR_PORT: '70000' })).toThrow(/EXECUTOR_PORT: out of range/);
  });
});

describe('executor configuration of token exchange', () => {
  const seal = generateSealingKey('unit-seal');
  const EXCHANGE = {
    GATEHOUSE_OIDC_ISSUER: 'https://idp.example/realms/acme',
    GATEHOUSE_EXCHANGE_CLIENT_ID: 'gatehouse-executor',
    GATEHOUSE_EXCHANGE_CLIENT_SECRET: 'executor-secret',
    GATEHOUSE_SEALING_KEYS: seal.sealingKey,
    GATEHOUSE_UNSEALING_KEYS: seal.unsealingKey,
  };

  it('is off without its client, and takes the sealing keys people’s tokens are kept under when on', () => {
    expect(executorConfigFromEnv(TRUSTED).exchange).toBeUndefined();
    const exchange = executorConfigFromEnv({ ...TRUSTED, ...EXCHANGE }).exchange;
    expect(exchange).toMatchObject({
      issuer: EXCHANGE.GATEHOUSE_OIDC_ISSUER,
      clientId: 'gatehouse-executor',
      clientSecret: 'executor-secret',
    });
    expect([...(exchange?.sealingKeys.keys() ?? [])]).toEqual(['unit-seal']);
    expect(exchange?.unsealingKeys.get('unit-seal')?.asymmetricKeyType).toBe('x25519');
  });

  it('refuses an exchange client without the keys that seal and open people’s tokens, naming each', () => {
    expect(() => executorConfigFromEnv({ ...TRUSTED, ...EXCHANGE, GATEHOUSE_SEALING_KEYS: '', GATEHOUSE_UNSEALING_KEYS: '' })).toThrow(
      /GATEHOUSE_SEALING_KEYS: required with GATEHOUSE_EXCHANGE_CLIENT_ID.*GATEHOUSE_UNSEALING_KEYS: required with GATEHOUSE_EXCHANGE_CLIENT_ID/s,
    );
  });

  it('refuses an unsealing key that is not one, without echoing what was given', () => {
    const signing = generateSigningKey('unit-seal').signingKey;
    let refusal = '';
    try {
      executorConfigFromEnv({ ...TRUSTED, ...EXCHANGE, GATEHOUSE_UNSEALING_KEYS: signing });
    } catch (error) {
      refusal = error instanceof Error ? error.message : String(error);
    }
    expect(refusal).toMatch(/GATEHOUSE_UNSEALING_KEYS/);
    expect(refusal).not.toContain(signing.split(':')[1]);
  });
});
