import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { APPROVAL_ENV_DEFAULTS, approvalConfigFromEnv } from '@gatehouse/approval';
import { isVariableName, VARIABLES } from '@gatehouse/runtime';
import { generateSigningKey } from '@gatehouse/events';

// Every service hosts a tool pack; these tests read configuration only and load none.
const PACK = {
  GATEHOUSE_TOOL_PACK: '@acme/tools',
  GATEHOUSE_SIGNING_KEY: generateSigningKey('unit').signingKey,
  GATEHOUSE_POLICY_KEYS: generateSigningKey('unit-policy').trustedKey,
};

describe('approval configuration', () => {
  it('uses the documented defaults', () => {
    const config = approvalConfigFromEnv(PACK);
    expect(config).toMatchObject({
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/gatehouse',
      schema: 'approvals',
      port: 8093,
      approvalValidityMs: 600_000,
      sweepMs: 1_000,
      outboxRetryMs: 10_000,
      groupId: 'gatehouse-approval',
    });
    expect(config.toolPack).toBe('@acme/tools');
    expect(config.approversFile).toBeUndefined();
  });

  it('refuses a schema name that is not a plain identifier', () => {
    expect(() => approvalConfigFromEnv({ ...PACK, APPROVALS_DB_SCHEMA: 'x; drop table y' })).toThrow(/schema name/);
  });

  it('refuses out-of-range numbers and non-postgres URLs', () => {
    expect(() => approvalConfigFromEnv({ ...PACK, APPROVAL_SWEEP_MS: '0' })).toThrow(/APPROVAL_SWEEP_MS/);
    expect(() => approvalConfigFromEnv({ ...PACK, APPROVAL_PORT: 'http' })).toThrow(/APPROVAL_PORT/);
    expect(() => approvalConfigFromEnv({ ...PACK, DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL/);
  });

  it('treats empty values as unset, so GATEHOUSE_REDIS_PREFIX="" means gh: as in the policy service and executor', () => {
    expect(approvalConfigFromEnv({ ...PACK, GATEHOUSE_REDIS_PREFIX: '', APPROVAL_GROUP_ID: '', APPROVAL_PORT: '' })).toMatchObject({
      redisPrefix: 'gh:',
      groupId: 'gatehouse-approval',
      port: 8093,
    });
  });

  it('refuses integers written other than in decimal digits', () => {
    expect(() => approvalConfigFromEnv({ ...PACK, APPROVAL_SWEEP_MS: '1e3' })).toThrow(/APPROVAL_SWEEP_MS: not a whole number/);
  });

  it('lists in APPROVAL_ENV_DEFAULTS the defaults of the configuration schema', () => {
    for (const [name, value] of Object.entries(APPROVAL_ENV_DEFAULTS)) {
      const fixed = isVariableName(name) ? VARIABLES[name].default : undefined;
      if (fixed !== undefined) expect(value, name).toBe(fixed);
    }
  });

  it('documents every variable in the README', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    for (const name of Object.keys(APPROVAL_ENV_DEFAULTS)) expect(readme).toContain(`| \`${name}\` |`);
  });
});
