import { describe, expect, it } from 'vitest';
import { policyConfigFromEnv } from '@gatehouse/policy';
import { generateSigningKey } from '@gatehouse/events';
import { generateSealingKey } from '@gatehouse/identity';

const TOKEN = { GATEHOUSE_CONTROL_TOKEN: 'a-control-token-of-some-length', GATEHOUSE_SIGNING_KEY: generateSigningKey('unit').signingKey };

describe('policy configuration', () => {
  it('uses the documented defaults', () => {
    expect(policyConfigFromEnv(TOKEN)).toMatchObject({
      port: 8091,
      concurrency: 64,
      sessionTimeoutMs: 10_000,
      maxArgumentBytes: 65_536,
      groupId: 'gatehouse-policy',
      redisPrefix: 'gh:',
      proposalTtlMs: 900_000,
    });
  });

  it('takes the session timeout and concurrency from the environment', () => {
    expect(policyConfigFromEnv({ ...TOKEN, POLICY_SESSION_TIMEOUT_MS: '6000', POLICY_CONCURRENCY: '8' })).toMatchObject({
      sessionTimeoutMs: 6_000,
      concurrency: 8,
    });
  });

  it('drafts proposals with the executor’s GATEHOUSE_PROPOSAL_TTL_MS', () => {
    expect(policyConfigFromEnv({ ...TOKEN, GATEHOUSE_PROPOSAL_TTL_MS: '60000' }).proposalTtlMs).toBe(60_000);
  });

  it('treats empty values as unset, like the other services', () => {
    const config = policyConfigFromEnv({
      ...TOKEN,
      GATEHOUSE_REDIS_PREFIX: '',
      POLICY_GROUP_ID: '',
      POLICY_HOST: '',
      GATEHOUSE_ROLES_FILE: '',
    });
    expect(config).toMatchObject({ redisPrefix: 'gh:', groupId: 'gatehouse-policy', host: '127.0.0.1' });
    // An empty override is no override: the hosted pack's own roles apply.
    expect(config.rolesFile).toBeUndefined();
  });

  it('accepts port 0 (any free port), as the other services do', () => {
    expect(policyConfigFromEnv({ ...TOKEN, POLICY_PORT: '0' }).port).toBe(0);
  });

  it('refuses a start with neither an identity provider nor a control token, and numbers that are not positive integers', () => {
    expect(() => policyConfigFromEnv({ GATEHOUSE_SIGNING_KEY: TOKEN.GATEHOUSE_SIGNING_KEY })).toThrow(
      /GATEHOUSE_OIDC_ISSUER: required unless GATEHOUSE_CONTROL_TOKEN is set/,
    );
    expect(
      policyConfigFromEnv({ GATEHOUSE_OIDC_ISSUER: 'https://idp.example/realms/a', GATEHOUSE_SIGNING_KEY: TOKEN.GATEHOUSE_SIGNING_KEY }),
    ).toMatchObject({
      controlToken: undefined,
      oidc: { issuer: 'https://idp.example/realms/a', audience: 'gatehouse-policy', scope: 'gatehouse.runs' },
    });
    expect(() => policyConfigFromEnv({ ...TOKEN, POLICY_SESSION_TIMEOUT_MS: '0' })).toThrow(/POLICY_SESSION_TIMEOUT_MS/);
    expect(() => policyConfigFromEnv({ ...TOKEN, POLICY_SESSION_TIMEOUT_MS: 'soon' })).toThrow(/POLICY_SESSION_TIMEOUT_MS/);
  });

  it('keeps people’s tokens for the executors only sealed to their keys: the exchange client needs GATEHOUSE_SEALING_KEYS', () => {
    const issuer = { ...TOKEN, GATEHOUSE_OIDC_ISSUER: 'https://idp.example/realms/a' };
    expect(policyConfigFromEnv(issuer).delegation).toBeUndefined();
    expect(() => policyConfigFromEnv({ ...issuer, GATEHOUSE_EXCHANGE_CLIENT_ID: 'gatehouse-executor' })).toThrow(
      /GATEHOUSE_SEALING_KEYS: required with GATEHOUSE_EXCHANGE_CLIENT_ID/,
    );
    const delegation = policyConfigFromEnv({
      ...issuer,
      GATEHOUSE_EXCHANGE_CLIENT_ID: 'gatehouse-executor',
      GATEHOUSE_SEALING_KEYS: generateSealingKey('unit-seal').sealingKey,
    }).delegation;
    expect(delegation?.clientId).toBe('gatehouse-executor');
    expect([...(delegation?.sealingKeys.keys() ?? [])]).toEqual(['unit-seal']);
    // The policy service never holds the private half: the variable is not one it reads.
    expect(() => policyConfigFromEnv({ ...issuer, GATEHOUSE_UNSEALING_KEYS: generateSealingKey('unit-seal').unsealingKey })).not.toThrow();
  });

  it('refuses an unknown Gatehouse variable by name', () => {
    expect(() => policyConfigFromEnv({ ...TOKEN, GATEHOUSE_REDIS_PREFXI: 'x:' })).toThrow(
      /GATEHOUSE_REDIS_PREFXI: not a Gatehouse variable; did you mean GATEHOUSE_REDIS_PREFIX\?/,
    );
  });
});
