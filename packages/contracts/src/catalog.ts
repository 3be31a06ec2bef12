import { Ajv2020 } from 'ajv/dist/2020.js';
import type { AnySchema, ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { JSONSchema, ToolContract } from './define-tool.js';
import type { ErrorCode } from './error-codes.js';
import { lintCatalog } from './schema-lint.js';
import { parseToolAddress } from './tool-address.js';
import type { ToolAddress } from './tool-address.js';
import { ContractError, toolError } from './tool-error.js';
import type { ToolError } from './tool-error.js';
import { describeErrors } from './validation-errors.js';

export type LookupResult =
  | {
      readonly ok: true;
      readonly tool: ToolContract;
      /** Still returned: runs granted a retired version keep calling it (see `retiredError`). */
      readonly retired: boolean;
      /** Highest non-retired version of the name; null when every version is retired. */
      readonly live: ToolAddress | null;
    }
  | { readonly ok: false; readonly error: ToolError };

export type ValidationResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ToolError };

interface Entry {
  readonly tool: ToolContract;
  readonly input: ValidateFunction;
  readonly output: ValidateFunction;
  /** A commit's proposal schema, when it declares one. */
  readonly proposal: ValidateFunction | undefined;
}

type Part = 'input' | 'output' | 'proposal';

function newAjv(): Ajv2020 {
  // Unknown fields are rejected, never dropped, defaulted or coerced.
  const ajv = new Ajv2020({
    strict: true,
    allErrors: true,
    allowUnionTypes: true,
    removeAdditional: false,
    useDefaults: false,
    coerceTypes: false,
  });
  // ajv-formats is CommonJS: under NodeNext its default import is `module.exports`, whose `.default`
  // is the plugin (date, time, date-time, duration, email, hostname, ipv4/6, uri, uuid, …).
  addFormats.default(ajv);
  return ajv;
}

function compile(ajv: Ajv2020, tool: ToolContract, part: Part, problems: string[]): ValidateFunction | undefined {
  const schema = tool[part];
  if (schema === undefined) return undefined;
  try {
    // json-schema-to-ts's readonly JSONSchema and Ajv's AnySchema describe the same JSON.
    return ajv.compile(schema as unknown as AnySchema);
  } catch (error) {
    problems.push(`${tool.address} /${part}: schema does not compile: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

/**
 * The tool catalog: every tool version side by side, linted and with its validators compiled once
 * at load. A catalog that has any problem does not load.
 */
export class Catalog {
  readonly #entries: ReadonlyMap<string, Entry>;
  readonly #live: ReadonlyMap<string, ToolAddress | null>;
  readonly #tools: readonly ToolContract[];

  private constructor(entries: Map<string, Entry>) {
    this.#entries = entries;
    const live = new Map<string, ToolContract | null>();
    for (const { tool } of entries.values()) {
      const best = live.get(tool.name) ?? null;
      if (!live.has(tool.name)) live.set(tool.name, null);
      if (tool.retired !== true && (best === null || tool.version > best.version)) live.set(tool.name, tool);
    }
    this.#live = new Map([...live].map(([name, tool]) => [name, tool?.address ?? null]));
    this.#tools = Object.freeze(
      [...entries.values()].map((e) => e.tool).sort((a, b) => (a.name === b.name ? a.version - b.version : a.name < b.name ? -1 : 1)),
    );
  }

  /** Lints and compiles every tool; throws ContractError listing ALL problems of ALL tools. */
  static load(tools: readonly ToolContract[]): Catalog {
    const problems = lintCatalog(tools);
    const ajv = newAjv();
    const entries = new Map<string, Entry>();
    const seen = new Set<string>();
    for (const tool of tools) {
      if (seen.has(tool.address)) continue; // reported by lintCatalog
      seen.add(tool.address);
      const input = compile(ajv, tool, 'input', problems);
      const output = compile(ajv, tool, 'output', problems);
      const proposal = compile(ajv, tool, 'proposal', problems);
      if (input !== undefined && output !== undefined) entries.set(tool.address, { tool, input, output, proposal });
    }
    if (problems.length > 0) throw new ContractError(problems);
    return new Catalog(entries);
  }

  /** Every tool version, ordered by name then version. */
  tools(): readonly ToolContract[] {
    return this.#tools;
  }

  get(address: string): ToolContract | undefined {
    return this.#entries.get(address)?.tool;
  }

  /** The live (highest non-retired) version of a name; null when unknown or all retired. */
  liveAddress(name: string): ToolAddress | null {
    return this.#live.get(name) ?? null;
  }

  /**
   * Resolves `name.vN`. Unknown names and malformed addresses answer TOOL_NOT_FOUND (with `next`
   * when the name is known); an unknown version of a known name answers TOOL_NOT_FOUND with `next`
   * = the live version. A retired version resolves (`retired: true`): the policy service answers
   * TOOL_VERSION_RETIRED (`retiredError`) to runs that were not granted it.
   */
  lookup(address: string): LookupResult {
    const parsed = parseToolAddress(address);
    const entry = this.#entries.get(address);
    if (parsed !== undefined && entry !== undefined) {
      return { ok: true, tool: entry.tool, retired: entry.tool.retired === true, live: this.liveAddress(parsed.name) };
    }
    const name = parsed?.name ?? address.split('.')[0] ?? '';
    const known = this.#live.has(name);
    const live = this.liveAddress(name);
    const message =
      parsed === undefined
        ? 'Tool address is malformed; expected <name>.v<version>, e.g. get_customer.v1'
        : known
          ? `Tool ${name} has no version ${parsed.version}`
          : `No tool named ${name} is registered`;
    return { ok: false, error: toolError('TOOL_NOT_FOUND', message, { next: live ?? undefined }) };
  }

  /** TOOL_VERSION_RETIRED for `address`, naming the live version in `next`. */
  retiredError(address: string): ToolError {
    const found = this.lookup(address);
    if (!found.ok) return found.error;
    const message =
      found.live === null ? `Tool ${address} is retired and no live version exists` : `Tool ${address} is retired; call ${found.live}`;
    return toolError('TOOL_VERSION_RETIRED', message, { next: found.live ?? undefined });
  }

  /** Validates arguments against the tool's input schema. Unknown fields are errors, never dropped. */
  validateInput<Args>(tool: ToolContract<JSONSchema, JSONSchema, Args, unknown>, args: unknown): ValidationResult<Args> {
    return this.#validate(tool, 'input', args, 'INVALID_ARGUMENT', 'Arguments') as ValidationResult<Args>;
  }

  /** Validates a result against the tool's output schema. A field outside it is a violation. */
  validateOutput<Result>(tool: ToolContract<JSONSchema, JSONSchema, unknown, Result>, result: unknown): ValidationResult<Result> {
    return this.#validate(tool, 'output', result, 'OUTPUT_INVALID', 'Result') as ValidationResult<Result>;
  }

  /**
   * Validates proposal arguments against a commit's proposal schema: a preview's draft before it is
   * stored, a stored proposal before the commit runs. They are the output of trusted code, so a
   * violation is OUTPUT_INVALID. A tool without a proposal schema accepts any value.
   */
  validateProposal<Proposal>(
    tool: ToolContract<JSONSchema, JSONSchema, unknown, unknown, Proposal>,
    args: unknown,
  ): ValidationResult<Proposal> {
    return this.#validate(tool, 'proposal', args, 'OUTPUT_INVALID', 'Proposal arguments') as ValidationResult<Proposal>;
  }

  #validate(tool: ToolContract, part: Part, value: unknown, code: ErrorCode, what: string): ValidationResult<unknown> {
    const entry = this.#entries.get(tool.address);
    if (entry?.tool !== tool) throw new Error(`Tool ${tool.address} is not loaded in this catalog`);
    const validate = entry[part];
    const schema = tool[part];
    if (validate === undefined || schema === undefined || validate(value)) return { ok: true, value };
    const details = describeErrors(schema, value, validate.errors ?? []);
    const first = details[0] ?? { field: '', message: 'is invalid' };
    const more = details.length > 1 ? ` (${details.length - 1} more in details)` : '';
    const message = `${what} of ${tool.address} invalid: ${first.field === '' ? '(root)' : first.field} ${first.message}${more}`;
    return { ok: false, error: toolError(code, message, { field: first.field, details }) };
  }
}
