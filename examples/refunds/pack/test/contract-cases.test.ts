// The contract tests of the refunds pack: for every tool version, the testkit's generated cases go
// through the catalog's own validators (the catalog validatePack builds, as a service hosts it).
// Valid cases must pass; each invalid case must be refused, not retryable, at exactly the JSON
// pointer the testkit names.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readPackConfig, validatePack } from '@gatehouse/sdk';
import type { JSONSchema, ToolContract, ValidationResult } from '@gatehouse/sdk';
import { refundsPack } from '@gatehouse/example-refunds';
import { boundaryValidCases, caseCounts, invalidCases, minimalValidCase } from '@gatehouse/testkit';
import type { JsonSchema } from '@gatehouse/testkit';

const readJson = (url: URL): unknown => JSON.parse(readFileSync(url, 'utf8'));
const deps = await refundsPack.setup(readPackConfig(refundsPack, {}));
const { catalog } = validatePack(refundsPack, { tools: refundsPack.tools(deps), roles: readJson(refundsPack.roles), policyTable: readJson(refundsPack.policyTable) });
const tools = catalog.tools();

const Part = { input: 'input', output: 'output', proposal: 'proposal' } as const;
type Part = keyof typeof Part;

const rejectionCode = { input: 'INVALID_ARGUMENT', output: 'OUTPUT_INVALID', proposal: 'OUTPUT_INVALID' } as const;

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

function verdict(name: string, result: ValidationResult<unknown>): object {
  if (result.ok) return { name, ok: true };
  const { code, retryable, field } = result.error;
  return { name, ok: false, code, retryable, field };
}

const partsOf = (tool: ToolContract): Part[] => (tool.proposal === undefined ? [Part.input, Part.output] : [Part.input, Part.output, Part.proposal]);

describe.each(tools.map((tool) => [tool.address, tool] as const))('contract cases of %s', (_address, tool) => {
  describe.each(partsOf(tool))('its %s schema', (part) => {
    it('accepts the minimal valid case', () => {
      const result = validate(tool, part, minimalValidCase(schemaOf(tool, part)));
      expect(result.ok ? [] : [result.error.message]).toEqual([]);
    });

    it('accepts every boundary valid case', () => {
      const rejected = boundaryValidCases(schemaOf(tool, part))
        .map((c) => ({ name: c.name, result: validate(tool, part, c.value) }))
        .flatMap(({ name, result }) => (result.ok ? [] : [`${name}: ${result.error.message}`]));
      expect(rejected).toEqual([]);
    });

    it('refuses every invalid case as not retryable, at the field the case names', () => {
      const cases = invalidCases(schemaOf(tool, part));
      expect(cases.length).toBeGreaterThan(0);
      const seen = cases.map((c) => verdict(c.name, validate(tool, part, c.value)));
      expect(seen).toEqual(cases.map((c) => ({ name: c.name, ok: false, code: rejectionCode[part], retryable: false, field: c.field })));
    });
  });
});

describe('the generated contract cases of the refunds pack', () => {
  it('cover the proposal schema of the refund commit', () => {
    expect(tools.filter((tool) => tool.previewedBy !== undefined).map((tool) => [tool.address, partsOf(tool).includes(Part.proposal)])).toEqual([
      ['commit_refund.v1', true],
    ]);
  });

  it('include a reason outside the closed set and an amount of zero, both refused at their field', () => {
    const preview = catalog.get('preview_refund.v1');
    if (preview === undefined) return expect.fail('preview_refund.v1 is not in the catalog');
    const cases = invalidCases(schemaOf(preview, 'input'));
    expect(cases.filter((c) => c.keyword === 'enum').map((c) => c.field)).toEqual(['/reason']);
    expect(cases.filter((c) => c.field === '/amount/minor').map((c) => c.keyword)).toContain('minimum');
    const perSchema = tools.flatMap((tool) => partsOf(tool).map((part) => caseCounts(schemaOf(tool, part))));
    expect(perSchema.filter((c) => c.valid < 1 || c.invalid < 1)).toEqual([]);
  });
});
