import { describe, expect, it } from 'vitest';
import { policyConfigFromEnv } from '@gatehouse/policy';

const TOKEN = { GATEHOUSE_CONTROL_TOKEN: 'a-control-token-of-some-length' };

describe('policy configuration', () => {
  it('uses the documented defaults', () => {
    expect(policyConfigFromEnv(TOKEN)).toMatchObject({
      port: 8091,
      concurrency: 64,
      sessionTimeoutMs: 10_000,
      maxArgumentBytes: 65_536,
      groupId: 'gatehouse-policy',
    });
  });

  it('takes the session timeout and concurrency from the environment', () => {
    expect(policyConfigFromEnv({ ...TOKEN, POLICY_SESSION_TIMEOUT_MS: '6000', POLICY_CONCURRENCY: '8' })).toMatchObject({ sessionTimeoutMs: 6_000, concurrency: 8 });
  });

  it('refuses a missing control token and numbers that are not positive integers', () => {
    expect(() => policyConfigFromEnv({})).toThrow(/GATEHOUSE_CONTROL_TOKEN/);
    expect(() => policyConfigFromEnv({ ...TOKEN, POLICY_SESSION_TIMEOUT_MS: '0' })).toThrow(/POLICY_SESSION_TIMEOUT_MS/);
    expect(() => policyConfigFromEnv({ ...TOKEN, POLICY_SESSION_TIMEOUT_MS: 'soon' })).toThrow(/POLICY_SESSION_TIMEOUT_MS/);
  });
});
