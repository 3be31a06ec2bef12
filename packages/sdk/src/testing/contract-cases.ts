// The testkit's generated cases for every tool's contract, each with the answer the catalog's own
// validators must give: valid cases accepted; each invalid case refused, not retryable, with the
// catalog's code, at exactly the JSON pointer the testkit names. `gatehouse pack check` runs them
// without a test runner; a pack's own tests run them one `it` per case.
import type { Catalog, ToolContract, ValidationResult } from '@gatehouse/contracts';
import { boundaryValidCases, invalidCases, minimalValidCase } from '@gatehouse/testkit';
import type { JsonSchema } from '@gatehouse/testkit';

/** The schemas of a contract the cases are generated for (`proposal`: the commit of a preview/commit pair). */
export type ContractPart = 'input' | 'output' | 'proposal';
export const CONTRACT_PARTS: readonly ContractPart[] = ['input', 'output', 'proposal'];

/** The code the catalog refuses a value of each part with. */
const REJECTION_CODE = { input: 'INVALID_ARGUMENT', output: 'OUTPUT_INVALID', proposal: 'OUTPUT_INVALID' } as const;

/** One generated value and the answer it must get. */
export interface ContractCase {
  /** The tool's address, e.g. `get_ticket.v1`. */
  readonly tool: string;
  readonly part: ContractPart;
  readonly kind: 'valid' | 'invalid';
  /** The testkit's name for the case. */
  readonly name: string;
  readonly value: unknown;
  /** For an invalid case, the JSON Schema keyword the value breaks (`required`, `enum`, `minimum`, …). */
  readonly keyword: string | null;
  /** The verdict the catalog must give: `accepted`, or `refused <CODE> at <pointer>`. */
  readonly expected: string;
}

/** The cases of a catalog, and the schemas no case could be generated for. */
export interface ContractCases {
  readonly cases: readonly ContractCase[];
  /** Schemas that were generated for, per part. */
  readonly schemas: Readonly<Record<ContractPart, number>>;
  /** One line per schema the testkit cannot cover, naming the tool and where `examples` would help. */
  readonly problems: readonly string[];
}

const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));

function validate(catalog: Catalog, tool: ToolContract, part: ContractPart, value: unknown): ValidationResult<unknown> {
  if (part === 'proposal') return catalog.validateProposal(tool, value);
  return part === 'input' ? catalog.validateInput(tool, value) : catalog.validateOutput(tool, value);
}

/** What the catalog answers `contractCase`, comparable with its `expected`. */
export function contractVerdict(catalog: Catalog, contractCase: ContractCase): string {
  const tool = catalog.get(contractCase.tool);
  if (tool === undefined) return `no tool ${contractCase.tool} in the catalog`;
  const result = validate(catalog, tool, contractCase.part, contractCase.value);
  if (result.ok) return 'accepted';
  return `refused ${result.error.code}${result.error.retryable ? ' (retryable)' : ''} at ${result.error.field ?? '(no field)'}`;
}

/** Every case of one schema of one tool. */
function casesOfSchema(tool: ToolContract, part: ContractPart, schema: JsonSchema): ContractCase[] {
  const valid = [{ name: 'minimal valid case', value: minimalValidCase(schema) }, ...boundaryValidCases(schema)];
  return [
    ...valid.map((c) => ({
      tool: tool.address,
      part,
      kind: 'valid' as const,
      name: c.name,
      value: c.value,
      keyword: null,
      expected: 'accepted',
    })),
    ...invalidCases(schema).map((c) => ({
      tool: tool.address,
      part,
      kind: 'invalid' as const,
      name: c.name,
      value: c.value,
      keyword: c.keyword,
      expected: `refused ${REJECTION_CODE[part]} at ${c.field}`,
    })),
  ];
}

/**
 * Generates the testkit's cases for `parts` of every tool that has them. A boolean schema, a schema
 * the testkit cannot turn into cases, or one that admits anything is a problem, not a case.
 */
export function contractCases(catalog: Catalog, parts: readonly ContractPart[] = CONTRACT_PARTS): ContractCases {
  const cases: ContractCase[] = [];
  const problems: string[] = [];
  const schemas: Record<ContractPart, number> = { input: 0, output: 0, proposal: 0 };
  for (const tool of catalog.tools()) {
    for (const part of parts) {
      const schema = tool[part];
      if (schema === undefined) continue;
      schemas[part] += 1;
      const at = `${tool.address} /${part}`;
      if (typeof schema === 'boolean') {
        problems.push(`${at}: a boolean schema; the testkit needs an object schema`);
        continue;
      }
      try {
        // The catalog lint already guarantees closed object schemas, the subset the testkit's JsonSchema describes.
        const generated = casesOfSchema(tool, part, schema as JsonSchema);
        if (!generated.some((c) => c.kind === 'invalid'))
          problems.push(`${at}: the testkit generates no invalid case; the schema admits anything`);
        cases.push(...generated);
      } catch (error) {
        // UnsupportedSchemaError (UNSUPPORTED_SCHEMA) names the schema location where `examples` would help.
        problems.push(`${at}: the testkit cannot generate cases: ${reason(error)}`);
      }
    }
  }
  return { cases, schemas, problems };
}
