// The testkit's generated cases for one part of every tool's contract, put through the catalog's own
// validators — the calls of examples/customer-support/pack/test/contract-cases.test.ts, as a check a pack
// author runs without a test runner. Valid cases must pass; each invalid case must be refused, not
// retryable, with the catalog's code, at exactly the JSON pointer the testkit names.
import type { Catalog, ToolContract, ValidationResult } from '@gatehouse/contracts';
import { boundaryValidCases, invalidCases, minimalValidCase } from '@gatehouse/testkit';
import type { JsonSchema } from '@gatehouse/testkit';

/** The schemas of a contract the cases are generated for. */
export const SchemaPart = { input: 'input', output: 'output', proposal: 'proposal' } as const;
export type SchemaPart = keyof typeof SchemaPart;

/** The code the catalog refuses a value of each part with. */
const REJECTION_CODE = { input: 'INVALID_ARGUMENT', output: 'OUTPUT_INVALID', proposal: 'OUTPUT_INVALID' } as const;

/** What running one part's cases over a catalog found. */
export interface CaseTally {
  /** Schemas the cases were generated for (tools that have this part). */
  readonly schemas: number;
  readonly valid: number;
  readonly invalid: number;
  /** One line per case the catalog judged otherwise, or schema the testkit cannot generate for, naming the tool. */
  readonly problems: readonly string[];
}

const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));

function validate(catalog: Catalog, tool: ToolContract, part: SchemaPart, value: unknown): ValidationResult<unknown> {
  if (part === 'proposal') return catalog.validateProposal(tool, value);
  return part === 'input' ? catalog.validateInput(tool, value) : catalog.validateOutput(tool, value);
}

/** The refusal an invalid case must get, and the one it got, comparable as text. */
function verdict(result: ValidationResult<unknown>): string {
  if (result.ok) return 'accepted';
  return `refused ${result.error.code}${result.error.retryable ? ' (retryable)' : ''} at ${result.error.field ?? '(no field)'}`;
}

/** Every case of one schema of one tool: counts and problems. */
function casesOf(catalog: Catalog, tool: ToolContract, part: SchemaPart, schema: JsonSchema): { valid: number; invalid: number; problems: string[] } {
  const at = `${tool.address} /${part}`;
  const problems: string[] = [];
  const valid = [{ name: 'minimal valid case', value: minimalValidCase(schema) }, ...boundaryValidCases(schema)];
  for (const c of valid) {
    const result = validate(catalog, tool, part, c.value);
    if (!result.ok) problems.push(`${at}: valid case "${c.name}" is refused: ${result.error.message}`);
  }
  const invalid = invalidCases(schema);
  if (invalid.length === 0) problems.push(`${at}: the testkit generates no invalid case; the schema admits anything`);
  for (const c of invalid) {
    const expected = `refused ${REJECTION_CODE[part]} at ${c.field}`;
    const got = verdict(validate(catalog, tool, part, c.value));
    if (got !== expected) problems.push(`${at}: invalid case "${c.name}" is ${got}; expected ${expected}`);
  }
  return { valid: valid.length, invalid: invalid.length, problems };
}

/**
 * Generates the testkit's cases for `part` of every tool that has it (`proposal`: the commits of
 * preview/commit pairs) and puts each through the catalog. A schema the testkit cannot turn into
 * cases is a problem too: its message names the place to add `examples`.
 */
export function runContractCases(catalog: Catalog, part: SchemaPart): CaseTally {
  let schemas = 0;
  let valid = 0;
  let invalid = 0;
  const problems: string[] = [];
  for (const tool of catalog.tools()) {
    const schema = tool[part];
    if (schema === undefined) continue;
    schemas += 1;
    if (typeof schema === 'boolean') {
      problems.push(`${tool.address} /${part}: a boolean schema; the testkit needs an object schema`);
      continue;
    }
    try {
      // The catalog lint already guarantees closed object schemas, the subset the testkit's JsonSchema describes.
      const counts = casesOf(catalog, tool, part, schema as JsonSchema);
      valid += counts.valid;
      invalid += counts.invalid;
      problems.push(...counts.problems);
    } catch (error) {
      // UnsupportedSchemaError (UNSUPPORTED_SCHEMA) names the schema location where `examples` would help.
      problems.push(`${tool.address} /${part}: the testkit cannot generate cases: ${reason(error)}`);
    }
  }
  return { schemas, valid, invalid, problems };
}
