import { boundaryValidCases, caseCounts, invalidCases, minimalValidCase } from '@gatehouse/testkit';
import { describe, expect, it } from 'vitest';
import { validator } from './ajv-oracle.js';
import { ALL_SCHEMAS } from './schemas.js';

describe.each(ALL_SCHEMAS)('cases generated for %s', (_title, schema) => {
  const check = validator(schema);

  it('makes a minimal case that Ajv accepts', () => {
    expect(check(minimalValidCase(schema))).toEqual({ valid: true, pointers: [] });
  });

  it('makes boundary cases that Ajv accepts', () => {
    const cases = boundaryValidCases(schema);
    expect(cases.length).toBeGreaterThan(0);
    const rejected = cases.filter((c) => !check(c.value).valid).map((c) => c.name);
    expect(rejected).toEqual([]);
  });

  it('makes invalid cases that Ajv rejects at the field each case names', () => {
    const cases = invalidCases(schema);
    expect(cases.length).toBeGreaterThan(0);
    const misses = cases
      .map((c) => ({ name: c.name, field: c.field, verdict: check(c.value) }))
      .filter(({ field, verdict }) => verdict.valid || !verdict.pointers.includes(field));
    expect(misses).toEqual([]);
  });

  it('gives every case a distinct name', () => {
    const names = [...invalidCases(schema), ...boundaryValidCases(schema)].map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it('generates the same cases in the same order every time', () => {
    const first = { minimal: minimalValidCase(schema), invalid: invalidCases(schema), valid: boundaryValidCases(schema) };
    const second = { minimal: minimalValidCase(schema), invalid: invalidCases(schema), valid: boundaryValidCases(schema) };
    expect(second).toEqual(first);
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
  });

  it('counts the minimal case with the boundary cases as valid, and every invalid case', () => {
    expect(caseCounts(schema)).toEqual({ valid: 1 + boundaryValidCases(schema).length, invalid: invalidCases(schema).length });
  });
});
