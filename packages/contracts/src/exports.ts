// The catalog exported for people and agent runtimes: the per-role snapshot that contract tests
// pin, and the same contracts as MCP tools and OpenAI function-calling definitions, so the schema
// the model sees is the schema the boundary enforces.
import type { Catalog } from './catalog.js';
import type { Effect, JSONSchema, ToolContract } from './define-tool.js';
import { toStrictParameters } from './openai-strict.js';
import { isSchemaObject } from './schema-walk.js';
import { TOOL_NAME_PATTERN, toolAddress } from './tool-address.js';
import type { ToolAddress } from './tool-address.js';
import { ContractError } from './tool-error.js';

export interface RoleSnapshotEntry {
  readonly tool: ToolAddress;
  readonly effect: Effect;
  readonly approval: string | null;
  readonly retired: boolean;
}

export type RoleSnapshot = Readonly<Record<string, readonly RoleSnapshotEntry[]>>;

const byNameThenVersion = (a: ToolContract, b: ToolContract): number =>
  a.name === b.name ? a.version - b.version : a.name < b.name ? -1 : 1;

/**
 * What each role can call: `{ role: [{tool, effect, approval, retired}] }`, roles and tools sorted,
 * so the same catalog and roles always give the same JSON (`snapshotJson`). An address that is not
 * in the catalog throws ContractError listing every such address.
 */
export function snapshotByRole(catalog: Catalog, roles: Readonly<Record<string, readonly string[]>>): RoleSnapshot {
  const problems: string[] = [];
  const snapshot: Record<string, readonly RoleSnapshotEntry[]> = {};
  for (const role of Object.keys(roles).sort()) {
    const tools = new Map<string, ToolContract>();
    for (const address of roles[role] ?? []) {
      const tool = catalog.get(address);
      if (tool === undefined) problems.push(`role ${role}: ${address} is not in the catalog`);
      else tools.set(address, tool);
    }
    snapshot[role] = [...tools.values()].sort(byNameThenVersion).map((tool) => ({
      tool: tool.address,
      effect: tool.effect,
      approval: tool.approval ?? null,
      retired: tool.retired === true,
    }));
  }
  if (problems.length > 0) throw new ContractError(problems);
  return snapshot;
}

/** Stable text of a snapshot for a checked-in file: two-space indented, newline-terminated. */
export function snapshotJson(snapshot: RoleSnapshot): string {
  return `${JSON.stringify(snapshot, null, 2)}\n`;
}

export interface McpTool {
  /** `${name}_v${version}`: MCP names allow only [a-zA-Z0-9_-]{1,64}. */
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: JSONSchema;
  /** Present when the output root is an object schema, as MCP requires. */
  readonly outputSchema?: JSONSchema;
  readonly annotations: {
    readonly title: string;
    readonly readOnlyHint: boolean;
    readonly destructiveHint: boolean;
    readonly idempotentHint: boolean;
    readonly openWorldHint: boolean;
  };
  /** What a program (not the model) needs to route and retry the call. */
  readonly _meta: {
    readonly 'gatehouse/address': ToolAddress;
    readonly 'gatehouse/effect': Effect;
    /** Id of the policy rule that governs a write; null for a read. */
    readonly 'gatehouse/approval': string | null;
    readonly 'gatehouse/retry': ToolContract['retry'];
  };
}

function mcpName(tool: ToolContract): string {
  const name = `${tool.name}_v${tool.version}`;
  if (name.length > 64) throw new ContractError([`${tool.address} /name: MCP tool name ${name} is longer than 64 characters`]);
  return name;
}

function titleOf(tool: ToolContract): string {
  const words = tool.name.replaceAll('_', ' ');
  return tool.title ?? `${words.charAt(0).toUpperCase()}${words.slice(1)} (v${tool.version})`;
}

export function toMcpTool(tool: ToolContract): McpTool {
  const title = titleOf(tool);
  const annotations = {
    title,
    readOnlyHint: tool.effect === 'read',
    destructiveHint: tool.destructive ?? tool.effect === 'write',
    idempotentHint: tool.retry !== 'never',
    openWorldHint: tool.external ?? false,
  };
  const base = { name: mcpName(tool), title, description: tool.description, inputSchema: tool.input };
  const meta = {
    'gatehouse/address': tool.address,
    'gatehouse/effect': tool.effect,
    'gatehouse/approval': tool.approval ?? null,
    'gatehouse/retry': tool.retry,
  };
  const objectOutput = isSchemaObject(tool.output) && tool.output['type'] === 'object';
  return objectOutput ? { ...base, outputSchema: tool.output, annotations, _meta: meta } : { ...base, annotations, _meta: meta };
}

/** The inverse of `toMcpTool(...).name`: `get_customer_v1` → `get_customer.v1`; undefined if not one. */
export function toolNameFromMcp(name: string): ToolAddress | undefined {
  const match = /^(.+)_v([1-9][0-9]*)$/.exec(name);
  if (match?.[1] === undefined || match[2] === undefined || !TOOL_NAME_PATTERN.test(match[1])) return undefined;
  return toolAddress(match[1], Number(match[2]));
}

export interface OpenAiFunctionTool {
  readonly type: 'function';
  readonly function: {
    readonly name: string;
    readonly description: string;
    readonly strict: true;
    readonly parameters: Record<string, unknown>;
  };
}

/**
 * An OpenAI function-calling tool in strict mode (see openai-strict.ts for the conversion and the
 * keywords kept). Optional fields become required + nullable: a runtime must drop `null`s of
 * fields that were optional before sending the call, since the boundary validates the original.
 */
export function toOpenAiFunction(tool: ToolContract): OpenAiFunctionTool {
  let parameters: Record<string, unknown>;
  try {
    parameters = toStrictParameters(tool.input);
  } catch (error) {
    throw new ContractError([`${tool.address} /input${error instanceof Error ? error.message : String(error)}`], { cause: error });
  }
  return { type: 'function', function: { name: mcpName(tool), description: tool.description, strict: true, parameters } };
}
