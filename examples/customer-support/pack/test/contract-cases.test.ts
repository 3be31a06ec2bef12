// The seeds' contract tests over the whole reference catalog: for every tool version, the testkit's
// generated cases go through the catalog's own validators. Valid cases must pass; each invalid case
// must be refused with the catalog's error at exactly the JSON pointer the testkit names (both
// packages document the same convention: a missing or unknown property is reported at the property
// itself, anything else at the offending value; a field of another union branch is an unknown field).
import { afterAll, describe, expect, it } from 'vitest';
import type { JSONSchema, ToolContract, ValidationResult } from '@gatehouse/contracts';
import { referenceCatalog } from '@gatehouse/reference-tools';
import { boundaryValidCases, caseCounts, invalidCases, minimalValidCase } from '@gatehouse/testkit';
import type { JsonSchema } from '@gatehouse/testkit';

const catalog = referenceCatalog();
const tools = catalog.tools();

const Part = { input: 'input', output: 'output', proposal: 'proposal' } as const;
type Part = keyof typeof Part;

const rejectionCode = { input: 'INVALID_ARGUMENT', output: 'OUTPUT_INVALID', proposal: 'OUTPUT_INVALID' } as const;

interface Ran {
  valid: number;
  invalid: number;
}

/** Cases that actually ran, per tool address, printed once the file is done. */
const ran = new Map<string, Ran>();

function record(tool: ToolContract, kind: keyof Ran, n: number): void {
  const counts = ran.get(tool.address) ?? { valid: 0, invalid: 0 };
  counts[kind] += n;
  ran.set(tool.address, counts);
}

function schemaOf(tool: ToolContract, part: Part): JsonSchema {
  const schema: JSONSchema | undefined = tool[part];
  if (schema === undefined) throw new Error(`${tool.address} has no ${part} schema`);
  if (typeof schema === 'boolean') throw new Error(`${tool.address} /${part} is a boolean schema; the testkit needs an object schema`);
  // json-schema-to-ts allows boolean sub-schemas and `T | undefined` keywords; the testkit's
  // JsonSchema describes the closed object schemas the catalog lint already guarantees.
  return schema as JsonSchema;
}

function validate(tool: ToolContract, part: Part, value: unknown): ValidationResult<unknown> {
  if (part === 'proposal') return catalog.validateProposal(tool, value);
  return part === 'input' ? catalog.validateInput(tool, value) : catalog.validateOutput(tool, value);
}

/** What a rejection looks like to an agent, for one case: comparable as a whole, so a diff names the case. */
function verdict(name: string, result: ValidationResult<unknown>): object {
  if (result.ok) return { name, ok: true };
  const { code, retryable, field } = result.error;
  return { name, ok: false, code, retryable, field };
}

afterAll(() => {
  for (const [address, counts] of [...ran].sort(([a], [b]) => (a < b ? -1 : 1))) {
    console.log(`contract cases  ${address}  valid ${counts.valid}  invalid ${counts.invalid}`);
  }
});

/** Each tool's schemas: input and output, and the proposal schema of a commit that has one. */
const partsOf = (tool: ToolContract): Part[] => (tool.proposal === undefined ? [Part.input, Part.output] : [Part.input, Part.output, Part.proposal]);

describe.each(tools.map((tool) => [tool.address, tool] as const))('contract cases of %s', (_address, tool) => {
  describe.each(partsOf(tool))('its %s schema', (part) => {
    it('accepts the minimal valid case', () => {
      const result = validate(tool, part, minimalValidCase(schemaOf(tool, part)));
      record(tool, 'valid', 1);
      expect(result.ok ? [] : [result.error.message]).toEqual([]);
    });

    it('accepts every boundary valid case', () => {
      const cases = boundaryValidCases(schemaOf(tool, part));
      const rejected = cases
        .map((c) => ({ name: c.name, result: validate(tool, part, c.value) }))
        .flatMap(({ name, result }) => (result.ok ? [] : [`${name}: ${result.error.message}`]));
      record(tool, 'valid', cases.length);
      expect(rejected).toEqual([]);
    });

    it('refuses every invalid case as not retryable, at the field the case names', () => {
      const cases = invalidCases(schemaOf(tool, part));
      expect(cases.length).toBeGreaterThan(0);
      const seen = cases.map((c) => verdict(c.name, validate(tool, part, c.value)));
      const expected = cases.map((c) => ({ name: c.name, ok: false, code: rejectionCode[part], retryable: false, field: c.field }));
      record(tool, 'invalid', cases.length);
      expect(seen).toEqual(expected);
    });
  });
});

describe('the generated contract cases', () => {
  it('cover the proposal schema of every commit', () => {
    const commits = tools.filter((tool) => tool.previewedBy !== undefined);
    expect(commits.map((tool) => [tool.address, partsOf(tool).includes(Part.proposal)])).toEqual([
      ['commit_address_change.v2', true],
      ['send_customer_email.v1', true],
    ]);
  });

  it('number more than 100 over the catalog, with invalid cases for every schema', () => {
    const perSchema = tools.flatMap((tool) => [Part.input, Part.output].map((part) => caseCounts(schemaOf(tool, part))));
    expect(perSchema).toHaveLength(2 * tools.length);
    expect(perSchema.filter((c) => c.valid < 1 || c.invalid < 1)).toEqual([]);
    const total = perSchema.reduce((sum, c) => sum + c.valid + c.invalid, 0);
    expect(total).toBeGreaterThan(100);
  });

  it('report a field of the other destination branch at that field, as an unknown field', () => {
    // The mixed-branch case kind, pinned by name so the suite notices if it stops being generated.
    const tool = catalog.get('preview_address_change.v1');
    if (tool === undefined) return expect.fail('preview_address_change.v1 is not in the reference catalog');
    const mixed = invalidCases(schemaOf(tool, 'input')).filter((c) => c.name.includes(' mixed with '));
    expect(mixed.map((c) => [c.field, c.keyword])).toEqual([
      ['/destination/line1', 'additionalProperties'],
      ['/destination/address_id', 'additionalProperties'],
    ]);
    for (const c of mixed) {
      const result = catalog.validateInput(tool, c.value);
      expect(result.ok ? undefined : result.error.details).toEqual([
        { field: c.field, keyword: 'additionalProperties', message: 'is not allowed: unknown field' },
      ]);
    }
  });
});
