import { describe, expect, it } from 'vitest';
import { ConfigError, readConfig, TOOLING_VARIABLES, variablesReadBy } from '@gatehouse/runtime';
import type { Env } from '@gatehouse/runtime';
import { generateSigningKey } from '@gatehouse/events';

const TOKEN = { GATEHOUSE_CONTROL_TOKEN: 'a-control-token-of-some-length', GATEHOUSE_SIGNING_KEY: generateSigningKey('unit').signingKey };

function refusedNames(env: Env): string[] {
  try {
    readConfig(variablesReadBy('policy'), { ...TOKEN, ...env });
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.refusals.map((r) => `${r.variable}: ${r.reason}`);
  }
}

describe('unknown variables', () => {
  it('refuses a misspelt Gatehouse variable by name and suggests the nearest known one', () => {
    expect(refusedNames({ GATEHOUSE_REDIS_PREFXI: 'x:' })).toEqual([
      'GATEHOUSE_REDIS_PREFXI: not a Gatehouse variable; did you mean GATEHOUSE_REDIS_PREFIX?',
    ]);
    expect(refusedNames({ POLICY_PROT: '8091' })).toEqual(['POLICY_PROT: not a Gatehouse variable; did you mean POLICY_PORT?']);
    expect(refusedNames({ EXECUTOR_CONCURENCY: '8' })).toEqual([
      'EXECUTOR_CONCURENCY: not a Gatehouse variable; did you mean EXECUTOR_CONCURRENCY?',
    ]);
  });

  it('refuses an unknown name under every reserved prefix, without a suggestion when none is close', () => {
    expect(
      refusedNames({ GATEHOUSE_FEATURE_FLAGS: '1', APPROVALS_MODE: 'x', APPROVAL_WEBHOOK: 'x', EXECUTOR_MODE: 'x', POLICY_WEBHOOK: 'x' }),
    ).toEqual([
      'APPROVALS_MODE: not a Gatehouse variable',
      'APPROVAL_WEBHOOK: not a Gatehouse variable',
      'EXECUTOR_MODE: not a Gatehouse variable',
      'GATEHOUSE_FEATURE_FLAGS: not a Gatehouse variable',
      'POLICY_WEBHOOK: not a Gatehouse variable',
    ]);
  });

  it("accepts the other services' and the CLI's variables, since deployments hand every service every variable", () => {
    expect(
      refusedNames({
        EXECUTOR_ID: 'e-1',
        EXECUTOR_PORT: 'not even a port',
        APPROVAL_PORT: '8093',
        APPROVALS_DB_SCHEMA: 'approvals',
        GATEHOUSE_APPROVER_TOKEN: 'token',
        GATEHOUSE_CONTROL_URL: 'http://policy:8091',
      }),
    ).toEqual([]);
  });

  it('accepts the names only the scripts and deployment files use', () => {
    expect(refusedNames(Object.fromEntries(Object.keys(TOOLING_VARIABLES).map((name) => [name, 'set'])))).toEqual([]);
  });

  it('leaves names outside the reserved prefixes alone, the reference domain included', () => {
    expect(
      refusedNames({
        CUSTOMERS_URL: 'http://customers:8090',
        CUSTOMERS_FAULTS: '1',
        KAFKAJS_NO_PARTITIONER_WARNING: '1',
        BENCH_LOG_LEVEL: 'x',
        PATH: '/bin',
        gatehouse_lower: 'x',
      }),
    ).toEqual([]);
  });

  it('ignores an unknown reserved name whose value is empty, as unset', () => {
    expect(refusedNames({ GATEHOUSE_REDIS_PREFXI: '' })).toEqual([]);
  });
});
