// @gatehouse/sdk/testing: a pack hosted as the services host it, the context a handler gets, and the
// contract cases `gatehouse pack check` runs, as a pack's own tests use them.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { defineToolPack, PackError } from '@gatehouse/sdk';
import { contractCases, contractVerdict, hostPackForTest, TEST_CREDENTIAL, testContext } from '@gatehouse/sdk/testing';
import { bankPack, ROLES, TABLE } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'sdk-testing-'));
writeFileSync(join(dir, 'roles.json'), JSON.stringify(ROLES));
writeFileSync(join(dir, 'policy-table.json'), JSON.stringify(TABLE));
const pack = defineToolPack({
  ...bankPack,
  roles: pathToFileURL(join(dir, 'roles.json')),
  policyTable: pathToFileURL(join(dir, 'policy-table.json')),
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('hostPackForTest', () => {
  it('reads the configuration from the env it is given, sets the pack up and finds each handler by address', async () => {
    const hosted = await hostPackForTest(pack, { LEDGER_TOKEN: 'secret', LEDGER_URL: 'http://ledger.test/' });
    expect(hosted.config).toMatchObject({ LEDGER_URL: 'http://ledger.test', LEDGER_TIMEOUT_MS: 2000 });
    expect(hosted.catalog.tools().map((t) => t.address)).toEqual(['commit_transfer.v1', 'get_balance.v1', 'preview_transfer.v1']);
    expect(hosted.implementation('get_balance.v1').contract.address).toBe('get_balance.v1');
    expect(() => hosted.implementation('get_balance.v9')).toThrow(
      'bank has no tool get_balance.v9; it has commit_transfer.v1, get_balance.v1, preview_transfer.v1',
    );
  });

  it('refuses as a service would: a required variable unset is a PackError naming it', async () => {
    const refused = await hostPackForTest(pack, {}).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(PackError);
    expect(String(refused)).toContain('LEDGER_TOKEN');
  });

  it('says so when it is given something other than a pack, such as an import under the wrong name', async () => {
    const misnamed = (await import('./fixtures.js')) as Record<string, unknown>;
    await expect(hostPackForTest(misnamed['ticketsPack'] as typeof pack)).rejects.toThrow(
      "hostPackForTest was given undefined, not a tool pack made with defineToolPack: check the name imported from the pack's module",
    );
  });

  it('names a document it cannot read', async () => {
    const lost = defineToolPack({ ...pack, roles: pathToFileURL(join(dir, 'missing.json')) });
    await expect(hostPackForTest(lost, { LEDGER_TOKEN: 't' })).rejects.toThrow(/the pack's roles file .*missing\.json cannot be read/);
  });
});

describe('testContext', () => {
  it('is a read in tenant acme whose credential is TEST_CREDENTIAL, with what the test overrides', async () => {
    const context = testContext({ idempotencyKey: 'run:p:commit', tenant: 'globex' });
    expect(context).toMatchObject({ tenant: 'globex', idempotencyKey: 'run:p:commit', deadlineAt: null, environment: 'test' });
    expect(context.signal.aborted).toBe(false);
    await expect(context.credential()).resolves.toBe(TEST_CREDENTIAL);
  });
});

describe('contractCases', () => {
  it('gives every schema valid and invalid cases, each judged by the catalog as expected', async () => {
    const { catalog } = await hostPackForTest(pack, { LEDGER_TOKEN: 't' });
    const { cases, problems, schemas } = contractCases(catalog);
    expect(problems).toEqual([]);
    expect(schemas).toEqual({ input: 3, output: 3, proposal: 1 });
    expect(cases.filter((c) => contractVerdict(catalog, c) !== c.expected)).toEqual([]);
    const invalid = cases.find((c) => c.tool === 'get_balance.v1' && c.part === 'input' && c.kind === 'invalid');
    expect(invalid?.expected).toMatch(/^refused INVALID_ARGUMENT at /);
    // A case judged otherwise is told apart: the verdict is the catalog's, not the expectation's.
    if (invalid === undefined) return;
    expect(contractVerdict(catalog, { ...invalid, expected: 'accepted' })).not.toBe('accepted');
    expect(contractVerdict(catalog, { ...invalid, tool: 'nope.v1' })).toBe('no tool nope.v1 in the catalog');
  });

  it('generates only the parts asked for', async () => {
    const { catalog } = await hostPackForTest(pack, { LEDGER_TOKEN: 't' });
    const proposals = contractCases(catalog, ['proposal']);
    expect(new Set(proposals.cases.map((c) => `${c.tool} /${c.part}`))).toEqual(new Set(['commit_transfer.v1 /proposal']));
  });
});
