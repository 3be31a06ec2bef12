import { describe, expect, it } from 'vitest';
import {
  Catalog,
  ContractError,
  defineTool,
  snapshotByRole,
  snapshotJson,
  toMcpTool,
  toOpenAiFunction,
  toolNameFromMcp,
} from '@gatehouse/contracts';
import { commitAddressChange, flowTools, getCustomer, previewAddressChange, readSpec } from './fixtures.js';

const catalog = Catalog.load(flowTools);

function objectsIn(schema: unknown, out: Record<string, unknown>[] = []): Record<string, unknown>[] {
  if (Array.isArray(schema)) schema.forEach((s) => objectsIn(s, out));
  else if (typeof schema === 'object' && schema !== null) {
    const node = schema as Record<string, unknown>;
    if ('properties' in node && typeof node['properties'] === 'object') out.push(node);
    for (const [key, value] of Object.entries(node)) {
      if (key === 'properties') Object.values(value as object).forEach((s) => objectsIn(s, out));
      else objectsIn(value, out);
    }
  }
  return out;
}

describe('toMcpTool', () => {
  it('describes a read as read-only, not destructive, idempotent and closed-world', () => {
    const tool = toMcpTool(getCustomer);
    expect(tool.name).toBe('get_customer_v1');
    expect(tool.title).toBe('Get customer (v1)');
    expect(tool.inputSchema).toBe(getCustomer.input);
    expect(tool.outputSchema).toBe(getCustomer.output);
    expect(tool.annotations).toEqual({
      title: 'Get customer (v1)',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
  });

  it('describes a write as destructive unless it says otherwise, and reports external reach', () => {
    expect(toMcpTool(commitAddressChange).annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
    const send = defineTool(
      readSpec({
        name: 'send_email',
        effect: 'write',
        retry: 'never',
        approval: 'outbound_email',
        destructive: false,
        external: true,
        title: 'Send an email',
      }),
    );
    expect(toMcpTool(send).annotations).toEqual({
      title: 'Send an email',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true,
    });
  });

  it('maps MCP names back to tool addresses and rejects anything else', () => {
    for (const tool of flowTools) expect(toolNameFromMcp(toMcpTool(tool).name)).toBe(tool.address);
    expect(toolNameFromMcp('list_v2_items_v10')).toBe('list_v2_items.v10');
    for (const name of ['get_customer', 'get_customer_v0', 'get_customer_v01', 'Get_customer_v1', 'get_customer.v1', '_v1']) {
      expect(toolNameFromMcp(name), name).toBeUndefined();
    }
  });
});

describe('toOpenAiFunction', () => {
  it('makes optional fields required and nullable, and closes every object', () => {
    const fn = toOpenAiFunction(getCustomer);
    expect(fn).toEqual({
      type: 'function',
      function: {
        name: 'get_customer_v1',
        description: 'Read one customer by id.',
        strict: true,
        parameters: {
          type: 'object',
          // minLength is not in the guide's supported list: dropped, the boundary still checks it.
          properties: { customer_id: { type: 'string' }, include_email: { type: ['boolean', 'null'] } },
          required: ['customer_id', 'include_email'],
          additionalProperties: false,
        },
      },
    });
  });

  it('turns oneOf into anyOf and keeps every branch strict', () => {
    const { parameters } = toOpenAiFunction(previewAddressChange).function;
    expect(JSON.stringify(parameters)).not.toContain('oneOf');
    const destination = (parameters['properties'] as Record<string, { anyOf: unknown[] }>)['destination'];
    expect(destination?.anyOf).toHaveLength(2);
    const objects = objectsIn(parameters);
    expect(objects).toHaveLength(3);
    for (const node of objects) {
      expect(node['additionalProperties']).toBe(false);
      expect(node['required']).toEqual(Object.keys(node['properties'] as object));
    }
  });

  it('keeps supported constraints, drops the rest (string lengths included), and wraps optional enums as nullable', () => {
    const tool = defineTool(
      readSpec({
        name: 'kw_probe',
        input: {
          type: 'object',
          additionalProperties: false,
          required: ['when', 'site'],
          title: 'Probe',
          properties: {
            when: { type: 'string', format: 'date', description: 'Calendar day.' },
            site: { type: 'string', format: 'uri', maxLength: 200, default: 'x' },
            tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, uniqueItems: true, maxItems: 3 },
            level: { enum: ['low', 'high'] },
          },
        },
      }),
    );
    const { parameters } = toOpenAiFunction(tool).function;
    expect(parameters['properties']).toEqual({
      when: { type: 'string', format: 'date', description: 'Calendar day.' },
      site: { type: 'string' },
      tags: { type: ['array', 'null'], items: { type: 'string', enum: ['a', 'b'] }, maxItems: 3 },
      level: { anyOf: [{ enum: ['low', 'high'] }, { type: 'null' }] },
    });
    expect(parameters).not.toHaveProperty('title');
  });

  it('refuses a schema strict mode cannot express', () => {
    const tool = defineTool(
      readSpec({
        name: 'all_of_probe',
        input: { type: 'object', unevaluatedProperties: false, allOf: [{ properties: { q: { type: 'string' } } }] },
      }),
    );
    expect(() => toOpenAiFunction(tool)).toThrow(ContractError);
    expect(() => toOpenAiFunction(tool)).toThrow(/all_of_probe\.v1 \/input: cannot be expressed in OpenAI strict mode: allOf/);
  });

  it('refuses a schema past the documented size limits, naming where', () => {
    let leaf: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 11; i++) leaf = { type: 'object', additionalProperties: false, required: ['n'], properties: { n: leaf } };
    const tool = defineTool(readSpec({ name: 'deep_probe', input: leaf }));
    expect(() => toOpenAiFunction(tool)).toThrow(ContractError);
    expect(() => toOpenAiFunction(tool)).toThrow(
      /deep_probe\.v1 \/input(\/properties\/n){11}: cannot be expressed in OpenAI strict mode: nesting depth 11 exceeds the limit of 10/,
    );
  });
});

describe('snapshotByRole', () => {
  const roles = {
    support_agent: ['preview_address_change.v2', 'get_customer.v1', 'commit_address_change.v2'],
    researcher: ['list_customers.v1', 'get_customer.v1'],
  };

  it('lists per role each tool with its effect, approval rule and retirement, sorted', () => {
    expect(snapshotByRole(catalog, roles)).toEqual({
      researcher: [
        { tool: 'get_customer.v1', effect: 'read', approval: null, retired: false },
        { tool: 'list_customers.v1', effect: 'read', approval: null, retired: false },
      ],
      support_agent: [
        { tool: 'commit_address_change.v2', effect: 'write', approval: 'address_change', retired: false },
        { tool: 'get_customer.v1', effect: 'read', approval: null, retired: false },
        { tool: 'preview_address_change.v2', effect: 'read', approval: null, retired: false },
      ],
    });
  });

  it('gives identical JSON for the same catalog and roles in any order', () => {
    const reordered = { researcher: [...roles.researcher].reverse(), support_agent: [...roles.support_agent].reverse() };
    const a = snapshotJson(snapshotByRole(catalog, roles));
    expect(snapshotJson(snapshotByRole(Catalog.load([...flowTools].reverse()), reordered))).toBe(a);
    expect(a.indexOf('"researcher"')).toBeLessThan(a.indexOf('"support_agent"'));
    expect(a.endsWith('}\n')).toBe(true);
  });

  it('refuses a role that names a tool outside the catalog', () => {
    expect(() => snapshotByRole(catalog, { researcher: ['get_customer.v9', 'delete_all.v1'] })).toThrow(
      /role researcher: get_customer\.v9 is not in the catalog[\s\S]*delete_all\.v1/,
    );
  });
});
