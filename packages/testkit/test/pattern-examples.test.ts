import { boundaryValidCases, invalidCases, minimalValidCase, UnsupportedSchemaError } from '@gatehouse/testkit';
import type { JsonSchema } from '@gatehouse/testkit';
import { describe, expect, it } from 'vitest';
import { validator } from './ajv-oracle.js';

const closed = (value: JsonSchema): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  required: ['value'],
  properties: { value },
});
const minimalOf = (value: JsonSchema): unknown => (minimalValidCase(closed(value)) as { value: unknown }).value;

const SUPPORTED = [
  '^[A-Z]{2}$',
  '^[a-z0-9_]+$',
  '^\\d{4}-\\d{2}$',
  '^\\w{3,5}$',
  '^(?:saved|new)-[0-9]{1,3}$',
  '^(ab|cd)*x?$',
  '^C-\\d+$',
  '^[^\\s@]+@[^\\s@]+\\.[a-z]{2,}$',
  '^\\+[1-9]\\d{6,14}$',
  '^(?<year>\\d{4})\\.v\\d$',
  '[A-Z]{3}',
];

describe('pattern examples', () => {
  it.each(SUPPORTED)('builds a matching minimal value, boundaries and broken values for %s', (pattern) => {
    const schema = closed({ type: 'string', pattern, minLength: 1, maxLength: 24 });
    const check = validator(schema);
    expect(check(minimalValidCase(schema)).valid).toBe(true);
    for (const c of boundaryValidCases(schema)) expect(check(c.value).valid, c.name).toBe(true);
    const broken = invalidCases(schema).filter((c) => c.keyword === 'pattern');
    expect(broken.length).toBeGreaterThan(0);
    for (const c of broken) expect(check(c.value).pointers, c.name).toContain('/value');
  });

  it('meets minLength with a longer match rather than padding', () => {
    expect(minimalOf({ type: 'string', pattern: '^[a-z0-9_]+$', minLength: 5 })).toBe('aaaaa');
    expect(minimalOf({ type: 'string', pattern: '^(ab)+$', minLength: 3 })).toBe('abab');
  });

  it('prefers examples[0] when it satisfies the limits and ignores it otherwise', () => {
    expect(minimalOf({ type: 'string', pattern: '^[A-Z]{2}$', examples: ['DE'] })).toBe('DE');
    expect(minimalOf({ type: 'string', pattern: '^[A-Z]{2}$', examples: ['Germany'] })).toBe('AA');
    expect(minimalOf({ type: 'integer', minimum: 1, maximum: 50, examples: [20] })).toBe(20);
  });

  it('uses examples[0] where a pattern is outside the supported subset and still breaks the pattern', () => {
    const schema = closed({ type: 'string', pattern: '^(?=.*\\d)[a-z\\d]{8}$', maxLength: 8, examples: ['abc12345'] });
    const check = validator(schema);
    expect(minimalValidCase(schema)).toEqual({ value: 'abc12345' });
    expect(boundaryValidCases(schema).every((c) => check(c.value).valid)).toBe(true);
    const invalid = invalidCases(schema);
    expect(invalid.map((c) => c.keyword)).toEqual(['type', 'required', 'additionalProperties', 'type', 'pattern', 'maxLength', 'pattern']);
    for (const c of invalid) expect(check(c.value).valid, c.name).toBe(false);
  });

  it('refuses a lookahead without an example and names the schema location', () => {
    const schema = closed({ type: 'string', pattern: '^(?=.*\\d)[a-z\\d]{8}$' });
    expect(() => minimalValidCase(schema)).toThrow(UnsupportedSchemaError);
    expect(() => minimalValidCase(schema)).toThrow(/#\/properties\/value\/pattern/);
    try {
      minimalValidCase(schema);
    } catch (error) {
      expect(error).toMatchObject({ code: 'UNSUPPORTED_SCHEMA', retryable: false, schemaPointer: '#/properties/value/pattern' });
    }
  });

  it('refuses backreferences, word boundaries and unknown formats without an example', () => {
    expect(() => minimalOf({ type: 'string', pattern: '^(a)\\1$' })).toThrow(UnsupportedSchemaError);
    expect(() => minimalOf({ type: 'string', pattern: '^\\bab$' })).toThrow(UnsupportedSchemaError);
    expect(() => minimalOf({ type: 'string', format: 'hostname' })).toThrow(/format "hostname"/);
    expect(minimalOf({ type: 'string', format: 'hostname', examples: ['example.com'] })).toBe('example.com');
  });

  it('refuses keywords outside the subset and open unions', () => {
    expect(() => minimalOf({ type: 'array', uniqueItems: true })).toThrow(/uniqueItems/);
    expect(() => minimalOf({ oneOf: [{ type: 'string' }, { type: 'integer' }] })).toThrow(UnsupportedSchemaError);
  });
});
