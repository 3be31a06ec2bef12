// Every reference tool, exported for agent runtimes: as an MCP tool and as an OpenAI strict function.
// The schema the model sees must be the schema the boundary enforces.
import { describe, expect, it } from 'vitest';
import { toMcpTool, toOpenAiFunction, toolNameFromMcp } from '@gatehouse/contracts';
import { customerSupportCatalog } from '@gatehouse/example-customer-support';

const tools = customerSupportCatalog().tools();
const byAddress = tools.map((tool) => [tool.address, tool] as const);

/** MCP tool names: https://modelcontextprotocol.io/specification (tools), [a-zA-Z0-9_-]{1,64}. */
const MCP_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

interface Found {
  readonly pointer: string;
  readonly schema: Readonly<Record<string, unknown>>;
}

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every subschema of `schema` with its JSON pointer, following only schema-valued keywords. */
function schemasIn(schema: unknown, pointer = ''): Found[] {
  if (!isRecord(schema)) return [];
  const found: Found[] = [{ pointer, schema }];
  for (const keyword of ['items', 'additionalProperties', 'not']) {
    found.push(...schemasIn(schema[keyword], `${pointer}/${keyword}`));
  }
  for (const keyword of ['properties', '$defs']) {
    const map = schema[keyword];
    if (isRecord(map)) for (const [name, sub] of Object.entries(map)) found.push(...schemasIn(sub, `${pointer}/${keyword}/${name}`));
  }
  for (const keyword of ['anyOf', 'oneOf', 'allOf', 'prefixItems']) {
    const list = schema[keyword];
    if (Array.isArray(list)) list.forEach((sub: unknown, i) => found.push(...schemasIn(sub, `${pointer}/${keyword}/${i}`)));
  }
  return found;
}

const isObjectSchema = (schema: Readonly<Record<string, unknown>>): boolean =>
  schema['type'] === 'object' || (Array.isArray(schema['type']) && schema['type'].includes('object')) || 'properties' in schema;

describe.each(byAddress)('the exports of %s', (_address, tool) => {
  it('exports to MCP as <name>_v<version> with the contract schemas and hints from its effect', () => {
    const mcp = toMcpTool(tool);
    expect(mcp.name).toBe(`${tool.name}_v${tool.version}`);
    expect(mcp.name).toMatch(MCP_NAME);
    expect(mcp.inputSchema).toEqual(tool.input);
    expect(mcp.outputSchema).toEqual(tool.output);
    expect(mcp.annotations.readOnlyHint).toBe(tool.effect === 'read');
    if (tool.effect === 'read') expect(mcp.annotations.destructiveHint).toBe(false);
    expect(mcp.annotations.openWorldHint).toBe(tool.name === 'send_customer_email');
  });

  it('maps its MCP name back to its address', () => {
    expect(toolNameFromMcp(toMcpTool(tool).name)).toBe(tool.address);
  });

  it('exports to OpenAI strict mode with every object closed, every property required and no oneOf', () => {
    const fn = toOpenAiFunction(tool);
    expect(fn.type).toBe('function');
    expect(fn.function.name).toBe(toMcpTool(tool).name);
    expect(fn.function.strict).toBe(true);
    const schemas = schemasIn(fn.function.parameters);
    const objects = schemas.filter(({ schema }) => isObjectSchema(schema));
    expect(objects.map(({ pointer }) => pointer)).toContain('');
    const loose = objects
      .filter(({ schema }) => {
        const properties = Object.keys(isRecord(schema['properties']) ? schema['properties'] : {});
        const required: unknown = schema['required'];
        const listsAll = Array.isArray(required) && required.length === properties.length && properties.every((p) => required.includes(p));
        return !listsAll || schema['additionalProperties'] !== false;
      })
      .map(({ pointer }) => pointer);
    expect(loose).toEqual([]);
    expect(schemas.filter(({ schema }) => 'oneOf' in schema).map(({ pointer }) => pointer)).toEqual([]);
  });
});

describe('the exported reference catalog', () => {
  it('gives every tool version a distinct MCP name', () => {
    const names = tools.map((tool) => toMcpTool(tool).name);
    expect(names).toHaveLength(10);
    expect(new Set(names).size).toBe(names.length);
  });

  it('marks only send_customer_email as reaching the world outside the tenant', () => {
    expect(tools.filter((tool) => toMcpTool(tool).annotations.openWorldHint).map((tool) => tool.address)).toEqual([
      'send_customer_email.v1',
    ]);
  });

  it('turns the destination oneOf into an anyOf of two closed branches for OpenAI', () => {
    const preview = tools.find((tool) => tool.address === 'preview_address_change.v1');
    if (preview === undefined) return expect.fail('preview_address_change.v1 is not in the reference catalog');
    const schemas = schemasIn(toOpenAiFunction(preview).function.parameters);
    expect(
      schemas
        .filter(({ pointer }) => /^\/properties\/destination\/anyOf\/\d+$/.test(pointer))
        .map(({ schema }) => schema['additionalProperties']),
    ).toEqual([false, false]);
  });
});
