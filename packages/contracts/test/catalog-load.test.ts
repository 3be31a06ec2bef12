import { describe, expect, it } from 'vitest';
import { Catalog, ContractError, defineTool } from '@gatehouse/contracts';
import type { JSONSchema, ToolContract, ToolSpec } from '@gatehouse/contracts';
import { commitAddressChange, destination, flowTools, readSpec } from './fixtures.js';

function problemsOf(tools: readonly ToolContract[]): readonly string[] {
  try {
    Catalog.load(tools);
  } catch (error) {
    if (error instanceof ContractError && error.code === 'CATALOG_INVALID') return error.problems;
    throw error;
  }
  return expect.fail('the catalog loaded');
}

const probe = (overrides: Partial<ToolSpec>): ToolContract => defineTool(readSpec(overrides));
const writeSpec: Partial<ToolSpec> = { effect: 'write', retry: 'idempotent', approval: 'probe_rule' };

describe('Catalog.load', () => {
  it('loads a catalog whose tools are all sound', () => {
    expect(
      Catalog.load(flowTools)
        .tools()
        .map((t) => t.address),
    ).toEqual(['commit_address_change.v2', 'get_customer.v1', 'list_customers.v1', 'preview_address_change.v2']);
  });

  it('refuses an open object nested in items', () => {
    const tool = probe({
      input: {
        type: 'object',
        additionalProperties: false,
        properties: { lines: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string' } } } } },
      },
    });
    expect(problemsOf([tool])).toEqual([expect.stringMatching(/^probe\.v1 \/input\/properties\/lines\/items: object schema is open/)]);
  });

  it('refuses an open branch of a oneOf', () => {
    const [saved, fresh] = destination.oneOf;
    const open = { type: 'object', required: fresh.required, properties: fresh.properties } as const;
    const tool = probe({
      input: { type: 'object', additionalProperties: false, properties: { destination: { oneOf: [saved, open] } } },
    });
    expect(problemsOf([tool])).toEqual([
      expect.stringMatching(/^probe\.v1 \/input\/properties\/destination\/oneOf\/1: object schema is open/),
    ]);
  });

  it('refuses a union of objects without a discriminator', () => {
    const a = { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { type: 'string' } } } as const;
    const b = { type: 'object', additionalProperties: false, required: ['email'], properties: { email: { type: 'string' } } } as const;
    const sameKind = { ...b, required: ['kind', 'email'], properties: { kind: { const: 'x' }, email: { type: 'string' } } } as const;
    const aKind = { ...a, required: ['kind', 'id'], properties: { kind: { const: 'x' }, id: { type: 'string' } } } as const;
    const optionalKind = { ...a, required: ['id'], properties: { kind: { const: 'y' }, id: { type: 'string' } } } as const;
    for (const branches of [
      [a, b],
      [aKind, sameKind],
      [optionalKind, sameKind],
    ]) {
      const tool = probe({ input: { type: 'object', additionalProperties: false, properties: { who: { anyOf: branches } } } });
      expect(problemsOf([tool])).toEqual([
        expect.stringMatching(/^probe\.v1 \/input\/properties\/who\/anyOf: union of object schemas is not discriminated/),
      ]);
    }
  });

  it('accepts a union discriminated by another property and a nullable object', () => {
    const branch = (t: string) =>
      ({ type: 'object', additionalProperties: false, required: ['type'], properties: { type: { const: t } } }) as const;
    const tool = probe({
      input: {
        type: 'object',
        additionalProperties: false,
        properties: { a: { oneOf: [branch('x'), branch('y')] }, b: { anyOf: [branch('z'), { type: 'null' }] } },
      },
    });
    expect(Catalog.load([tool]).get('probe.v1')).toBe(tool);
  });

  it('counts in-place branches of a closed schema as closed', () => {
    const tool = probe({
      input: {
        type: 'object',
        unevaluatedProperties: false,
        allOf: [{ properties: { q: { type: 'string' } } }, { required: ['q'] }],
      },
    });
    expect(Catalog.load([tool]).get('probe.v1')).toBe(tool);
  });

  it('finds open objects under $defs, patternProperties, else and prefixItems, but not in if conditions', () => {
    const open = { type: 'object' } as const;
    const tool = probe({
      input: {
        type: 'object',
        additionalProperties: false,
        $defs: { money: open },
        patternProperties: { '^x_': open },
        properties: {
          q: { type: 'string' },
          pair: { type: 'array', prefixItems: [open], items: false, minItems: 1 },
          rule: { if: open, then: { type: 'string' }, else: open },
        },
      } as JSONSchema, // json-schema-to-ts's JSONSchema type predates $defs and prefixItems
    });
    expect(new Set(problemsOf([tool]).map((p) => p.split(':')[0]))).toEqual(
      new Set([
        'probe.v1 /input/$defs/money',
        'probe.v1 /input/patternProperties/^x_',
        'probe.v1 /input/properties/pair/prefixItems/0',
        'probe.v1 /input/properties/rule/else',
      ]),
    );
  });

  it('refuses a write without an approval rule', () => {
    const { approval, ...spec } = readSpec(writeSpec);
    expect(approval).toBe('probe_rule');
    expect(problemsOf([defineTool(spec)])).toEqual([expect.stringMatching(/^probe\.v1 \/approval: a write must name the policy rule/)]);
  });

  it('refuses a write whose retry class is safe, and a read that claims idempotent', () => {
    expect(problemsOf([probe({ ...writeSpec, retry: 'safe' })])).toEqual([
      expect.stringMatching(/^probe\.v1 \/retry: a write cannot be "safe"/),
    ]);
    expect(problemsOf([probe({ retry: 'idempotent' })])).toEqual([
      expect.stringMatching(/^probe\.v1 \/retry: a read is "safe" or "never"/),
    ]);
  });

  const listInput = (pageSize: object) =>
    ({ type: 'object', additionalProperties: false, required: ['page_size'], properties: { page_size: pageSize } }) as const;
  const listOutput = { type: 'object', additionalProperties: false, properties: { cursor: { type: 'string' } } } as const;

  it('refuses a list without page_size', () => {
    const tool = probe({ name: 'list_things', pagination: { maxPageSize: 20 }, output: listOutput });
    expect(problemsOf([tool])).toEqual([
      expect.stringMatching(/^list_things\.v1 \/input\/properties\/page_size: a list must take a required integer page_size/),
    ]);
  });

  it('refuses a page_size without a maximum, or above pagination.maxPageSize', () => {
    const noMax = probe({
      name: 'list_a',
      pagination: { maxPageSize: 20 },
      input: listInput({ type: 'integer', minimum: 1 }),
      output: listOutput,
    });
    const tooBig = probe({
      name: 'list_b',
      pagination: { maxPageSize: 20 },
      input: listInput({ type: 'integer', minimum: 1, maximum: 500 }),
      output: listOutput,
    });
    expect(problemsOf([noMax, tooBig])).toEqual([
      expect.stringMatching(/^list_a\.v1 \/input\/properties\/page_size\/maximum: page_size needs a maximum/),
      expect.stringMatching(
        /^list_b\.v1 \/input\/properties\/page_size\/maximum: page_size maximum 500 exceeds pagination\.maxPageSize 20/,
      ),
    ]);
  });

  it('refuses a list_ tool without pagination and a paginated tool without a cursor', () => {
    const input = listInput({ type: 'integer', minimum: 1, maximum: 10 });
    expect(problemsOf([probe({ name: 'list_c', input, output: listOutput })])).toEqual([
      expect.stringMatching(/^list_c\.v1 \/pagination: a list tool/),
    ]);
    expect(problemsOf([probe({ name: 'find', input, pagination: { maxPageSize: 10 } })])).toEqual([
      expect.stringMatching(/^find\.v1 \/output\/properties\/cursor: a list must return a cursor/),
    ]);
  });

  it('refuses an open output schema', () => {
    const tool = probe({ output: { type: 'object', properties: { ok: { type: 'boolean' } } } });
    expect(problemsOf([tool])).toEqual([expect.stringMatching(/^probe\.v1 \/output: object schema is open/)]);
  });

  it('refuses an input whose root is not an object', () => {
    expect(problemsOf([probe({ input: { type: 'string' } })])).toEqual([
      expect.stringMatching(/^probe\.v1 \/input\/type: the input root must be "type": "object"/),
    ]);
  });

  it('refuses duplicate addresses', () => {
    expect(problemsOf([probe({}), probe({ description: 'Another probe.' })])).toEqual([
      'probe.v1: duplicate address; each tool version is registered once',
    ]);
  });

  it('refuses a commit tool that takes more than proposal_id', () => {
    const commit = defineTool({
      ...commitAddressChange,
      input: {
        type: 'object',
        additionalProperties: false,
        required: ['proposal_id'],
        properties: { proposal_id: { type: 'string' }, country: { type: 'string' } },
      },
    });
    const tools = flowTools.map((t) => (t.address === commit.address ? commit : t));
    expect(problemsOf(tools)).toEqual([
      expect.stringMatching(/^commit_address_change\.v2 \/input: a commit tool must take exactly \{proposal_id: string\}/),
    ]);
  });

  it('refuses preview and commit links to tools that are not in the catalog', () => {
    const tools = flowTools.filter((t) => t.address !== 'commit_address_change.v2');
    expect(problemsOf(tools)).toEqual([
      'preview_address_change.v2 /commits: references commit_address_change.v2, which is not in the catalog',
    ]);
  });

  it('refuses a schema Ajv cannot compile in strict mode', () => {
    const tool = probe({
      input: { type: 'object', additionalProperties: false, properties: { n: { type: 'integer', minimun: 1 } } } as never,
    });
    expect(problemsOf([tool])).toEqual([expect.stringMatching(/^probe\.v1 \/input: schema does not compile: .*minimun/)]);
  });

  it('reports every problem of every tool at once', () => {
    const problems = problemsOf([
      probe({ name: 'Bad-Name', version: 0, output: { type: 'object' } }),
      probe({ name: 'other', ...writeSpec, retry: 'safe', timeoutMs: -1, cancel: 'compensate:nope' as const }),
    ]);
    expect(problems).toEqual([
      expect.stringMatching(/^Bad-Name\.v0 \/name:/),
      expect.stringMatching(/^Bad-Name\.v0 \/version:/),
      expect.stringMatching(/^Bad-Name\.v0 \/output: object schema is open/),
      expect.stringMatching(/^other\.v1 \/timeoutMs:/),
      expect.stringMatching(/^other\.v1 \/cancel:/),
      expect.stringMatching(/^other\.v1 \/retry: a write cannot be "safe"/),
    ]);
  });
});
