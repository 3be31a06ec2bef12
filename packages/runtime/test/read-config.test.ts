import { inspect } from 'node:util';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { ConfigError, readConfig, SERVICES, variablesReadBy } from '@gatehouse/runtime';
import type { Env, Refusal, VariableName } from '@gatehouse/runtime';
import { generateSigningKey } from '@gatehouse/events';

/** The refusals of reading `names` from `env`; fails the test when nothing is refused. */
function refusals(names: readonly VariableName[], env: Env): readonly Refusal[] {
  try {
    readConfig(names, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).refusals;
  }
  throw new Error('expected a ConfigError');
}

function reasonOf(name: VariableName, raw: string): string | undefined {
  return refusals([name], { [name]: raw }).find((r) => r.variable === name)?.reason;
}

// The services' signing keys are required: a pair for the tests that read a whole service's settings.
const PAIR = generateSigningKey('unit');
const KEYS = {
  GATEHOUSE_SIGNING_KEY: PAIR.signingKey,
  GATEHOUSE_POLICY_KEYS: generateSigningKey('unit-policy').trustedKey,
  GATEHOUSE_APPROVAL_KEYS: generateSigningKey('unit-approval').trustedKey,
  GATEHOUSE_EXECUTOR_KEYS: generateSigningKey('unit-executor').trustedKey,
  GATEHOUSE_ASSERTION_KEY: generateSigningKey('unit-assertion').signingKey,
};

describe('readConfig', () => {
  it('refuses a variable unset for a reader that requires it, and leaves it unset for one that does not', () => {
    const without = (name: keyof typeof KEYS): Record<string, string> =>
      Object.fromEntries(Object.entries(KEYS).filter(([key]) => key !== name));
    const withoutPolicyKeys = without('GATEHOUSE_POLICY_KEYS');
    expect(() => readConfig(variablesReadBy('executor'), withoutPolicyKeys, 'executor')).toThrow(
      /GATEHOUSE_POLICY_KEYS: required: orders, approval requests/,
    );
    const withoutExecutorKeys = without('GATEHOUSE_EXECUTOR_KEYS');
    expect(readConfig(variablesReadBy('executor'), withoutExecutorKeys, 'executor').GATEHOUSE_EXECUTOR_KEYS).toBeUndefined();
    expect(() => readConfig(variablesReadBy('mcp'), withoutExecutorKeys, 'mcp')).toThrow(/GATEHOUSE_EXECUTOR_KEYS: required/);
  });

  it('gives every variable its default when the environment is empty', () => {
    const config = readConfig(variablesReadBy('executor'), KEYS);
    expect(config).toMatchObject({
      KAFKA_BROKERS: ['127.0.0.1:9092'],
      SCHEMA_REGISTRY_URL: 'http://127.0.0.1:8081/apis/ccompat/v7',
      GATEHOUSE_TOPIC_PREFIX: '',
      REDIS_URL: 'redis://127.0.0.1:6379',
      GATEHOUSE_REDIS_PREFIX: 'gh:',
      GATEHOUSE_PROPOSAL_TTL_MS: 900_000,
      EXECUTOR_PORT: 8092,
      GATEHOUSE_TENANT_SLOT_LIMITS: {},
    });
    expect(config.EXECUTOR_ID).toBeUndefined();
  });

  it('returns values typed by the schema, so call sites need no casts', () => {
    const config = readConfig(['POLICY_PORT', 'POLICY_GROUP_ID', 'KAFKA_BROKERS', 'LOG_LEVEL'], {});
    expectTypeOf(config.POLICY_PORT).toEqualTypeOf<number>();
    expectTypeOf(config.POLICY_GROUP_ID).toEqualTypeOf<string | undefined>();
    expectTypeOf(config.KAFKA_BROKERS).toEqualTypeOf<readonly string[]>();
    expectTypeOf(config.LOG_LEVEL).toEqualTypeOf<'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'>();
    expectTypeOf(config).not.toHaveProperty('EXECUTOR_ID');
  });

  it('treats an empty value as unset in every service, so GATEHOUSE_REDIS_PREFIX="" means gh: everywhere', () => {
    for (const service of SERVICES) {
      const config = readConfig(variablesReadBy(service), {
        ...KEYS,
        GATEHOUSE_REDIS_PREFIX: '',
        GATEHOUSE_CONTROL_TOKEN: 'a-control-token-of-some-length',
      });
      expect(config.GATEHOUSE_REDIS_PREFIX).toBe('gh:');
    }
    expect(
      readConfig(['POLICY_GROUP_ID', 'POLICY_PORT', 'KAFKA_BROKERS'], { POLICY_GROUP_ID: '', POLICY_PORT: '', KAFKA_BROKERS: '' }),
    ).toEqual({
      POLICY_GROUP_ID: undefined,
      POLICY_PORT: 8091,
      KAFKA_BROKERS: ['127.0.0.1:9092'],
    });
  });

  it.each(['1e3', '0x10', ' 8 ', '8.0', '-1', '+8', 'soon', '99999999999999999999'])(
    'refuses the integer %j: decimal digits only',
    (raw) => {
      expect(reasonOf('POLICY_CONCURRENCY', raw)).toMatch(/^not a whole number \(decimal digits only; must be ≥ 1\)/);
    },
  );

  it('refuses integers out of their range and names the range', () => {
    expect(reasonOf('POLICY_CONCURRENCY', '0')).toBe('out of range (must be ≥ 1), got "0"');
    expect(reasonOf('APPROVAL_SWEEP_MS', '5')).toBe('out of range (must be 10..60000), got "5"');
    expect(readConfig(['APPROVAL_SWEEP_MS'], { APPROVAL_SWEEP_MS: '60000' }).APPROVAL_SWEEP_MS).toBe(60_000);
  });

  it('accepts every port from 0 to 65535 and nothing above', () => {
    expect(
      readConfig(['POLICY_PORT', 'EXECUTOR_PORT', 'APPROVAL_PORT'], { POLICY_PORT: '0', EXECUTOR_PORT: '65535', APPROVAL_PORT: '0' }),
    ).toEqual({
      POLICY_PORT: 0,
      EXECUTOR_PORT: 65_535,
      APPROVAL_PORT: 0,
    });
    expect(reasonOf('EXECUTOR_PORT', '65536')).toMatch(/out of range \(must be 0\.\.65535\)/);
  });

  it('checks URLs by scheme and trims the registry URL', () => {
    expect(reasonOf('SCHEMA_REGISTRY_URL', 'ftp://registry')).toBe('not a http:// or https:// URL, got "ftp://registry"');
    expect(reasonOf('SCHEMA_REGISTRY_URL', 'not a url')).toBe('not a URL, got "not a url"');
    expect(reasonOf('REDIS_URL', 'http://127.0.0.1:6379')).toBe('not a redis:// or rediss:// URL');
    expect(reasonOf('DATABASE_URL', 'mysql://x')).toBe('not a postgres:// or postgresql:// URL');
    expect(readConfig(['SCHEMA_REGISTRY_URL'], { SCHEMA_REGISTRY_URL: 'https://sr.internal//' }).SCHEMA_REGISTRY_URL).toBe(
      'https://sr.internal',
    );
  });

  it('never echoes the value of a secret variable', () => {
    const error = refusals(['REDIS_URL', 'GATEHOUSE_CONTROL_TOKEN'], {
      REDIS_URL: 'http://:hunter2-password@redis',
      GATEHOUSE_CONTROL_TOKEN: 'hunter2',
    });
    expect(error.map((r) => r.reason).join(' ')).not.toContain('hunter2');
    expect(error.find((r) => r.variable === 'GATEHOUSE_CONTROL_TOKEN')?.reason).toBe('too short (must be at least 16 characters)');
  });

  it('keeps a malformed secret URL out of the error and its cause, as printed at start-up', () => {
    try {
      readConfig(['DATABASE_URL', 'REDIS_URL'], {
        DATABASE_URL: 'postgres://app:hunter2-password@[db',
        REDIS_URL: 'redis://:hunter3-password@[redis',
      });
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const printed = inspect(error, { depth: 10 });
      expect(printed).toMatch(/DATABASE_URL: not a URL/);
      expect(printed).not.toContain('hunter2');
      expect(printed).not.toContain('hunter3');
    }
  });

  it('refuses a missing required variable and says why it is needed', () => {
    expect(refusals(['GATEHOUSE_APPROVER_TOKEN'], {})).toEqual([
      { variable: 'GATEHOUSE_APPROVER_TOKEN', reason: 'required: the approvals commands act as the approver it names' },
    ]);
  });

  it('parses JSON values once and names the variable when they are not what the schema wants', () => {
    expect(
      readConfig(['GATEHOUSE_TENANT_SLOT_LIMITS'], { GATEHOUSE_TENANT_SLOT_LIMITS: '{"acme": 2}' }).GATEHOUSE_TENANT_SLOT_LIMITS,
    ).toEqual({ acme: 2 });
    const [syntax] = refusals(['GATEHOUSE_TENANT_SLOT_LIMITS'], { GATEHOUSE_TENANT_SLOT_LIMITS: '{acme: 2}' });
    expect(syntax?.reason).toMatch(/^not a JSON object \(.+\), got "\{acme: 2\}"$/);
    expect(syntax?.cause).toBeInstanceOf(SyntaxError);
    expect(reasonOf('GATEHOUSE_TENANT_SLOT_LIMITS', '[2]')).toBe('not a JSON object (got an array), got "[2]"');
    expect(reasonOf('GATEHOUSE_TENANT_SLOT_LIMITS', '{"acme": 0}')).toBe(
      'the value of "acme" is not an integer ≥ 1, got "{\\"acme\\": 0}"',
    );
  });

  it('throws one CONFIG_INVALID error, not retryable, that names every refused variable and why', () => {
    let caught: unknown;
    try {
      readConfig(variablesReadBy('executor'), {
        ...KEYS,
        GATEHOUSE_TENANT_SLOT_LIMITS: '{',
        EXECUTOR_PORT: 'http',
        GATEHOUSE_REDIS_PREFXI: 'x:',
      });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const error = caught as ConfigError;
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.retryable).toBe(false);
    expect(error.refusals.map((r) => r.variable)).toEqual(['GATEHOUSE_TENANT_SLOT_LIMITS', 'EXECUTOR_PORT', 'GATEHOUSE_REDIS_PREFXI']);
    expect(error.message).toMatch(/^invalid configuration \(3 variables refused\): GATEHOUSE_TENANT_SLOT_LIMITS: not a JSON object/);
    expect(error.message).toContain('; EXECUTOR_PORT: not a whole number');
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it('shows only the first 80 characters of a long refused value', () => {
    expect(reasonOf('POLICY_CONCURRENCY', '9'.repeat(200))).toMatch(/got "9{80}…"$/);
  });

  it('refuses a Redis prefix with braces, which would split the keys a script uses together across Cluster slots', () => {
    expect(() => readConfig(variablesReadBy('executor'), { ...KEYS, GATEHOUSE_REDIS_PREFIX: 'gh{x}:' })).toThrow(/GATEHOUSE_REDIS_PREFIX/);
    expect(readConfig(variablesReadBy('executor'), { ...KEYS, GATEHOUSE_REDIS_PREFIX: 'tenant-a:' }).GATEHOUSE_REDIS_PREFIX).toBe(
      'tenant-a:',
    );
  });
});
