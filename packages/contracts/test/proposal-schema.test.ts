// A commit's proposal schema: linted and compiled at catalog load like an input, and the validator
// the executor applies to drafts and stored proposals.
import { describe, expect, it } from 'vitest';
import { Catalog, ContractError, defineTool } from '@gatehouse/contracts';
import type { JSONSchema, ToolContract } from '@gatehouse/contracts';
import { commitAddressChange, flowTools, getCustomer, previewAddressChange } from './fixtures.js';

function problemsOf(tools: readonly ToolContract[]): readonly string[] {
  try {
    Catalog.load(tools);
  } catch (error) {
    if (error instanceof ContractError && error.code === 'CATALOG_INVALID') return error.problems;
    throw error;
  }
  return expect.fail('the catalog loaded');
}

const proposal = {
  type: 'object',
  additionalProperties: false,
  required: ['customer_id', 'expected_version'],
  properties: { customer_id: { type: 'string', minLength: 1 }, expected_version: { type: 'integer', minimum: 1 } },
} as const;

/** The fixture pair, its commit carrying `schema` as the proposal schema. */
const withProposal = (schema: JSONSchema): readonly ToolContract[] => {
  const commit = defineTool({ ...commitAddressChange, proposal: schema });
  return flowTools.map((t) => (t.address === commit.address ? commit : t));
};

describe('a proposal schema at catalog load', () => {
  it('loads on a commit tool when every object is closed', () => {
    const tools = withProposal(proposal);
    expect(Catalog.load(tools).get('commit_address_change.v2')?.proposal).toEqual(proposal);
  });

  it('refuses an open proposal schema, naming the tool and the place', () => {
    const open = { type: 'object', required: ['customer_id'], properties: { customer_id: { type: 'string' } } } as const;
    expect(problemsOf(withProposal(open))).toEqual([
      expect.stringMatching(/^commit_address_change\.v2 \/proposal: object schema is open; add "additionalProperties": false/),
    ]);
  });

  it('refuses an open object nested in a proposal schema', () => {
    const nested = {
      ...proposal,
      properties: { ...proposal.properties, address: { type: 'object', properties: { line1: { type: 'string' } } } },
    } as const;
    expect(problemsOf(withProposal(nested))).toEqual([
      expect.stringMatching(/^commit_address_change\.v2 \/proposal\/properties\/address: object schema is open/),
    ]);
  });

  it('refuses a proposal schema whose root is not an object', () => {
    expect(problemsOf(withProposal({ type: 'string' }))).toEqual([
      'commit_address_change.v2 /proposal/type: the proposal root must be "type": "object"',
    ]);
  });

  it('refuses a proposal schema on a tool that is not a commit', () => {
    const read = defineTool({ ...getCustomer, proposal });
    expect(problemsOf([read])).toEqual(['get_customer.v1 /proposal: only a commit tool (previewedBy) carries a proposal schema']);
  });

  it('refuses a proposal schema Ajv cannot compile', () => {
    const typo = { ...proposal, properties: { ...proposal.properties, customer_id: { type: 'string', minLenght: 1 } } } as never;
    expect(problemsOf(withProposal(typo))).toEqual([
      expect.stringMatching(/^commit_address_change\.v2 \/proposal: schema does not compile: .*minLenght/),
    ]);
  });
});

describe('Catalog.validateProposal', () => {
  const catalog = Catalog.load(withProposal(proposal));
  const commit = catalog.get('commit_address_change.v2');
  if (commit === undefined) throw new Error('the fixture commit did not load');

  it('accepts arguments the proposal schema admits', () => {
    const args = { customer_id: 'C-1', expected_version: 4 };
    expect(catalog.validateProposal(commit, args)).toEqual({ ok: true, value: args });
  });

  it('refuses other arguments as OUTPUT_INVALID at the offending field', () => {
    const checked = catalog.validateProposal(commit, { customer_id: 'C-1', expected_version: 0 });
    expect(checked.ok ? undefined : checked.error).toMatchObject({
      code: 'OUTPUT_INVALID',
      retryable: false,
      field: '/expected_version',
      message: 'Proposal arguments of commit_address_change.v2 invalid: /expected_version must be >= 1',
    });
  });

  it('reports an unknown field of the proposal arguments, never drops it', () => {
    const checked = catalog.validateProposal(commit, { customer_id: 'C-1', expected_version: 0, extra: true });
    expect(checked.ok ? [] : checked.error.details).toEqual([
      expect.objectContaining({ field: '/extra', keyword: 'additionalProperties' }),
      expect.objectContaining({ field: '/expected_version', keyword: 'minimum' }),
    ]);
  });

  it('accepts anything for a tool without a proposal schema', () => {
    const plain = Catalog.load(flowTools);
    expect(plain.validateProposal(commitAddressChange, { anything: 1 })).toEqual({ ok: true, value: { anything: 1 } });
    expect(plain.validateProposal(previewAddressChange, 'text').ok).toBe(true);
  });

  it('refuses to validate for a contract the catalog did not load', () => {
    expect(() => catalog.validateProposal(commitAddressChange, {})).toThrow(/not loaded in this catalog/);
  });
});
