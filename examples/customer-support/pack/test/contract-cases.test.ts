// The seeds' contract tests over the whole customer-support catalog: for every tool version, the
// testkit's generated cases go through the catalog's own validators (`contractCases` of
// @gatehouse/sdk/testing). Valid cases must pass; each invalid case must be refused with the
// catalog's error at exactly the JSON pointer the testkit names (both packages document the same
// convention: a missing or unknown property is reported at the property itself, anything else at the
// offending value; a field of another union branch is an unknown field).
import { afterAll, describe, expect, it } from 'vitest';
import { contractCases, contractVerdict, hostPackForTest } from '@gatehouse/sdk/testing';
import { customerSupportPack } from '@gatehouse/example-customer-support';

const { catalog } = await hostPackForTest(customerSupportPack);
const tools = catalog.tools();
const { cases, problems } = contractCases(catalog);

afterAll(() => {
  for (const tool of tools) {
    const ofTool = cases.filter((c) => c.tool === tool.address);
    console.log(
      `contract cases  ${tool.address}  valid ${ofTool.filter((c) => c.kind === 'valid').length}  invalid ${ofTool.filter((c) => c.kind === 'invalid').length}`,
    );
  }
});

describe('the contract cases of the customer-support pack', () => {
  it('cover every schema of every tool: none the testkit cannot generate for', () => {
    expect(problems).toEqual([]);
  });

  it.each(cases.map((c) => [`${c.tool} /${c.part}: ${c.kind} "${c.name}"`, c] as const))('%s gets its verdict', (_title, c) => {
    expect(contractVerdict(catalog, c)).toBe(c.expected);
  });

  it('cover the proposal schema of every commit', () => {
    const commits = tools.filter((tool) => tool.previewedBy !== undefined);
    expect(commits.map((tool) => [tool.address, cases.some((c) => c.tool === tool.address && c.part === 'proposal')])).toEqual([
      ['commit_address_change.v2', true],
      ['send_customer_email.v1', true],
    ]);
  });

  it('number more than 100 over the catalog, with valid and invalid cases for every input and output schema', () => {
    for (const tool of tools) {
      for (const part of ['input', 'output'] as const) {
        const ofSchema = cases.filter((c) => c.tool === tool.address && c.part === part);
        expect([ofSchema.some((c) => c.kind === 'valid'), ofSchema.some((c) => c.kind === 'invalid')], `${tool.address} /${part}`).toEqual([
          true,
          true,
        ]);
      }
    }
    expect(cases.filter((c) => c.part !== 'proposal').length).toBeGreaterThan(100);
  });

  it('report a field of the other destination branch at that field, as an unknown field', () => {
    // The mixed-branch case kind, pinned by name so the suite notices if it stops being generated.
    const tool = catalog.get('preview_address_change.v1');
    if (tool === undefined) return expect.fail('preview_address_change.v1 is not in the catalog');
    const mixed = cases.filter((c) => c.tool === tool.address && c.part === 'input' && c.name.includes(' mixed with '));
    expect(mixed.map((c) => [c.expected, c.keyword])).toEqual([
      ['refused INVALID_ARGUMENT at /destination/line1', 'additionalProperties'],
      ['refused INVALID_ARGUMENT at /destination/address_id', 'additionalProperties'],
    ]);
    for (const c of mixed) {
      const result = catalog.validateInput(tool, c.value);
      expect(result.ok ? undefined : result.error.details).toEqual([
        {
          field: c.expected.replace('refused INVALID_ARGUMENT at ', ''),
          keyword: 'additionalProperties',
          message: 'is not allowed: unknown field',
        },
      ]);
    }
  });
});
