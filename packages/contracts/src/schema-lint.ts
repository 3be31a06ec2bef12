// Pure checks run at catalog load. Each problem is one readable line naming the tool address and
// the JSON pointer of the offending place in the contract (`/input/properties/items/items`).
import { Effect, RateLimitScope, RetryClass } from './define-tool.js';
import type { ToolContract } from './define-tool.js';
import {
  IN_PLACE,
  derefLocal,
  findDiscriminator,
  isClosed,
  isObjectSchema,
  isSchemaObject,
  propertiesOf,
  requiredOf,
  subschemas,
} from './schema-walk.js';
import type { SchemaObject } from './schema-walk.js';
import { TOOL_NAME_PATTERN, parseToolAddress } from './tool-address.js';

const isPositiveInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
const isNonEmptyString = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';

/**
 * Schema-level problems under `pointer`: every object schema is closed (an in-place applicator
 * branch of a closed schema counts as closed: it sees the same instance; `if` / `not` conditions
 * are exempt: they never admit a value), and every union with two
 * or more object branches is discriminated by a required property pinned with distinct `const`s.
 */
export function lintSchema(root: unknown, pointer: string): string[] {
  const problems: string[] = [];
  // `condition`: under `if` / `not`, which never admit a value themselves, openness is harmless.
  const visit = (schema: unknown, at: string, closedByParent: boolean, condition: boolean): void => {
    if (!isSchemaObject(schema)) return;
    const closed = isClosed(schema) || closedByParent;
    if (isObjectSchema(schema) && !closed && !condition) {
      problems.push(`${at}: object schema is open; add "additionalProperties": false or "unevaluatedProperties": false`);
    }
    for (const keyword of ['oneOf', 'anyOf'] as const) {
      const branches = schema[keyword];
      if (!Array.isArray(branches)) continue;
      const objectBranches = branches.filter((b) => isObjectSchema(derefLocal(root, b)));
      if (objectBranches.length >= 2 && findDiscriminator(root, objectBranches) === undefined) {
        problems.push(
          `${at}/${keyword}: union of object schemas is not discriminated; every branch must require a ` +
            `property (e.g. "kind") with a distinct "const"`,
        );
      }
    }
    for (const sub of subschemas(schema, at)) {
      visit(sub.schema, sub.pointer, closed && IN_PLACE.has(sub.keyword), condition || sub.keyword === 'if' || sub.keyword === 'not');
    }
  };
  visit(root, pointer, false, false);
  return problems;
}

function lintFields(tool: ToolContract): string[] {
  const p: string[] = [];
  if (typeof tool.name !== 'string' || !TOOL_NAME_PATTERN.test(tool.name)) p.push('/name: must be snake_case matching ^[a-z][a-z0-9_]*$');
  if (!isPositiveInt(tool.version)) p.push('/version: must be a positive integer');
  if (!isNonEmptyString(tool.description)) p.push('/description: must be a non-empty string');
  if (!Object.hasOwn(Effect, tool.effect)) p.push('/effect: must be "read" or "write"');
  if (!Object.hasOwn(RetryClass, tool.retry)) p.push('/retry: must be "safe", "idempotent" or "never"');
  if (!isPositiveInt(tool.timeoutMs)) p.push('/timeoutMs: must be a positive integer');
  if (!isPositiveInt(tool.maxResultBytes)) p.push('/maxResultBytes: must be a positive integer');
  if (!isNonEmptyString(tool.concurrency)) p.push('/concurrency: must be a non-empty slot class');
  if (tool.approval !== undefined && !isNonEmptyString(tool.approval)) p.push('/approval: must be a non-empty rule id');
  if (tool.rateLimit !== undefined) {
    const { limit, windowMs, per } = tool.rateLimit;
    if (!isPositiveInt(limit)) p.push('/rateLimit/limit: must be a positive integer');
    if (!isPositiveInt(windowMs)) p.push('/rateLimit/windowMs: must be a positive integer');
    if (!Object.hasOwn(RateLimitScope, per)) p.push('/rateLimit/per: must be "tenant" or "run"');
  }
  const cancel: string = tool.cancel;
  if (cancel !== 'none' && cancel !== 'cooperative' && !(cancel.startsWith('compensate:') && parseToolAddress(cancel.slice(11)))) {
    p.push('/cancel: must be "none", "cooperative" or "compensate:<tool>.v<version>"');
  }
  return p;
}

function lintEffect(tool: ToolContract): string[] {
  const p: string[] = [];
  if (tool.effect === 'write') {
    if (!isNonEmptyString(tool.approval)) p.push('/approval: a write must name the policy rule that governs it');
    if (tool.retry === 'safe')
      p.push('/retry: a write cannot be "safe"; use "idempotent" (with an idempotency key and a status query) or "never"');
  }
  if (tool.effect === 'read') {
    if (tool.retry === 'idempotent') p.push('/retry: a read is "safe" or "never"; "idempotent" is for writes');
    if (tool.destructive === true) p.push('/destructive: a read cannot be destructive');
    if (tool.honoursIdempotencyKey === true) p.push('/honoursIdempotencyKey: only a write sends an idempotency key');
  }
  return p;
}

function lintList(tool: ToolContract): string[] {
  const p: string[] = [];
  const maxPageSize = tool.pagination?.maxPageSize;
  if (tool.pagination === undefined) p.push('/pagination: a list tool (name list_…) must declare pagination {maxPageSize}');
  else if (!isPositiveInt(maxPageSize)) p.push('/pagination/maxPageSize: must be a positive integer');
  const input = isSchemaObject(tool.input) ? tool.input : {};
  const pageSize = derefLocal(input, propertiesOf(input)['page_size']);
  if (!isSchemaObject(pageSize)) {
    p.push('/input/properties/page_size: a list must take a required integer page_size');
  } else {
    const at = '/input/properties/page_size';
    if (!requiredOf(input).includes('page_size')) p.push('/input/required: a list must require page_size');
    if (pageSize['type'] !== 'integer') p.push(`${at}/type: page_size must be "integer"`);
    const min = pageSize['minimum'];
    if (typeof min !== 'number' || min < 1) p.push(`${at}/minimum: page_size needs a minimum >= 1`);
    const max = pageSize['maximum'];
    if (typeof max !== 'number') p.push(`${at}/maximum: page_size needs a maximum`);
    else if (isPositiveInt(maxPageSize) && max > maxPageSize) {
      p.push(`${at}/maximum: page_size maximum ${max} exceeds pagination.maxPageSize ${maxPageSize}`);
    }
  }
  const output = isSchemaObject(tool.output) ? tool.output : {};
  if (!('cursor' in propertiesOf(output))) p.push('/output/properties/cursor: a list must return a cursor');
  return p;
}

const COMMIT_INPUT_EXTRAS = ['oneOf', 'anyOf', 'allOf', 'if', 'then', 'else', 'not', 'patternProperties', 'dependentSchemas', '$ref'];

/** A commit tool takes exactly `{ proposal_id: string }`, required and closed: no replacement arguments. */
function lintCommitInput(input: SchemaObject): string[] {
  const props = Object.keys(propertiesOf(input));
  const proposalId = derefLocal(input, propertiesOf(input)['proposal_id']);
  const ok =
    props.length === 1 &&
    props[0] === 'proposal_id' &&
    isSchemaObject(proposalId) &&
    proposalId['type'] === 'string' &&
    requiredOf(input).includes('proposal_id') &&
    isClosed(input) &&
    input['additionalProperties'] !== true &&
    COMMIT_INPUT_EXTRAS.every((k) => !(k in input));
  return ok ? [] : ['/input: a commit tool must take exactly {proposal_id: string}, required and closed'];
}

/** A proposal schema belongs to a commit and is linted like an input: an object root, every object closed. */
function lintProposal(tool: ToolContract): string[] {
  const p: string[] = [];
  if (tool.previewedBy === undefined) p.push('/proposal: only a commit tool (previewedBy) carries a proposal schema');
  if (!isSchemaObject(tool.proposal) || tool.proposal['type'] !== 'object')
    p.push('/proposal/type: the proposal root must be "type": "object"');
  p.push(...lintSchema(tool.proposal, '/proposal'));
  return p;
}

/** Every problem of one tool, each prefixed with its address. Cross-tool references: `lintCatalog`. */
export function lintTool(tool: ToolContract): string[] {
  const p = [...lintFields(tool), ...lintEffect(tool)];
  if (!isSchemaObject(tool.input) || tool.input['type'] !== 'object') p.push('/input/type: the input root must be "type": "object"');
  p.push(...lintSchema(tool.input, '/input'), ...lintSchema(tool.output, '/output'));
  if (tool.pagination !== undefined || (typeof tool.name === 'string' && tool.name.startsWith('list_'))) p.push(...lintList(tool));
  if (tool.previewedBy !== undefined) {
    if (tool.effect !== 'write') p.push('/effect: a commit tool (previewedBy) must be a write');
    p.push(...lintCommitInput(isSchemaObject(tool.input) ? tool.input : {}));
  }
  if (tool.commits !== undefined && tool.effect !== 'read') p.push('/effect: a preview tool (commits) must be a read');
  if (tool.proposal !== undefined) p.push(...lintProposal(tool));
  return p.map((problem) => `${String(tool.address)} ${problem}`);
}

/** Problems of a whole catalog: each tool's, duplicate addresses, and references between tools. */
export function lintCatalog(tools: readonly ToolContract[]): string[] {
  const problems: string[] = [];
  const byAddress = new Map<string, ToolContract>();
  for (const tool of tools) {
    if (byAddress.has(tool.address)) problems.push(`${tool.address}: duplicate address; each tool version is registered once`);
    else byAddress.set(tool.address, tool);
  }
  for (const tool of byAddress.values()) {
    problems.push(...lintTool(tool));
    const ref = (pointer: string, target: string | undefined, check: (t: ToolContract) => string | undefined): void => {
      if (target === undefined) return;
      const other = byAddress.get(target);
      const problem = other === undefined ? `references ${target}, which is not in the catalog` : check(other);
      if (problem !== undefined) problems.push(`${tool.address} ${pointer}: ${problem}`);
    };
    ref('/commits', tool.commits, (c) =>
      c.previewedBy === tool.address ? undefined : `${c.address} must declare previewedBy: ${tool.address}`,
    );
    ref('/previewedBy', tool.previewedBy, (v) =>
      v.commits === tool.address ? undefined : `${v.address} must declare commits: ${tool.address}`,
    );
    if (typeof tool.cancel === 'string' && tool.cancel.startsWith('compensate:') && parseToolAddress(tool.cancel.slice(11))) {
      ref('/cancel', tool.cancel.slice(11), (c) => (c.effect === 'write' ? undefined : `compensation ${c.address} must be a write`));
    }
  }
  return problems;
}
