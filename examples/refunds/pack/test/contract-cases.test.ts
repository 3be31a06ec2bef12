// The contract tests of the refunds pack: for every tool version, the testkit's generated cases go
// through the catalog's own validators (`contractCases` of @gatehouse/sdk/testing, over the pack as
// a service hosts it). Valid cases must pass; each invalid case must be refused, not retryable, at
// exactly the JSON pointer the testkit names.
import { describe, expect, it } from 'vitest';
import { contractCases, contractVerdict, hostPackForTest } from '@gatehouse/sdk/testing';
import { refundsPack } from '@gatehouse/example-refunds';

const { catalog } = await hostPackForTest(refundsPack);
const { cases, problems } = contractCases(catalog);

describe('the contract cases of the refunds pack', () => {
  it('cover every schema of every tool: none the testkit cannot generate for', () => {
    expect(problems).toEqual([]);
  });

  it.each(cases.map((c) => [`${c.tool} /${c.part}: ${c.kind} "${c.name}"`, c] as const))('%s gets its verdict', (_title, c) => {
    expect(contractVerdict(catalog, c)).toBe(c.expected);
  });

  it('cover the proposal schema of the refund commit', () => {
    const commits = catalog.tools().filter((tool) => tool.previewedBy !== undefined);
    expect(commits.map((tool) => [tool.address, cases.some((c) => c.tool === tool.address && c.part === 'proposal')])).toEqual([
      ['commit_refund.v1', true],
    ]);
  });

  it('include a reason outside the closed set and an amount of zero, both refused at their field', () => {
    const previewInput = cases.filter((c) => c.tool === 'preview_refund.v1' && c.part === 'input' && c.kind === 'invalid');
    expect(previewInput.filter((c) => c.keyword === 'enum').map((c) => c.expected)).toEqual(['refused INVALID_ARGUMENT at /reason']);
    expect(previewInput.filter((c) => c.expected.endsWith(' at /amount/minor')).map((c) => c.keyword)).toContain('minimum');
    for (const tool of catalog.tools()) {
      for (const part of tool.proposal === undefined ? ['input', 'output'] : ['input', 'output', 'proposal']) {
        const ofSchema = cases.filter((c) => c.tool === tool.address && c.part === part);
        expect([ofSchema.some((c) => c.kind === 'valid'), ofSchema.some((c) => c.kind === 'invalid')], `${tool.address} /${part}`).toEqual([
          true,
          true,
        ]);
      }
    }
  });
});
