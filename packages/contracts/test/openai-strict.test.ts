// The strict-mode conversion against OpenAI's Structured Outputs guide, "Supported schemas"
// (checked 2026-11-30): what is kept, what is dropped, what is refused, and the documented limits.
import { describe, expect, it } from 'vitest';
import { STRICT_LIMITS, StrictSchemaError, toStrictParameters } from '../src/openai-strict.js';

type Schema = Record<string, unknown>;

/** A closed object schema whose properties are all required. */
const obj = (properties: Schema): Schema => ({
  type: 'object',
  additionalProperties: false,
  required: Object.keys(properties),
  properties,
});

/** The converted schema of the single required property `p`. */
function converted(schema: Schema): unknown {
  return (toStrictParameters(obj({ p: schema }))['properties'] as Schema)['p'];
}

function rejection(input: Schema): StrictSchemaError {
  try {
    toStrictParameters(input);
  } catch (error) {
    if (error instanceof StrictSchemaError) return error;
    throw error;
  }
  return expect.fail('expected a StrictSchemaError');
}

/** `levels` objects nested under `n`, the innermost holding `leaf` (required unless `optional`). */
function nested(levels: number, leaf: Schema, optional = false): Schema {
  let schema: Schema = optional ? { type: 'object', additionalProperties: false, required: [], properties: { leaf } } : obj({ leaf });
  for (let i = 1; i < levels; i++) schema = obj({ n: schema });
  return schema;
}

describe('toStrictParameters keeps what the guide lists as supported', () => {
  it('keeps string pattern and each documented format', () => {
    expect(converted({ type: 'string', pattern: '^[A-Z]{2}$', description: 'Country.' })).toEqual({
      type: 'string',
      pattern: '^[A-Z]{2}$',
      description: 'Country.',
    });
    for (const format of ['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']) {
      expect(converted({ type: 'string', format }), format).toEqual({ type: 'string', format });
    }
  });

  it('keeps the number constraints', () => {
    const number = { type: 'number', multipleOf: 0.5, minimum: 0, maximum: 10, exclusiveMinimum: -1, exclusiveMaximum: 11 };
    expect(converted(number)).toEqual(number);
  });

  it('keeps the array constraints minItems and maxItems', () => {
    expect(converted({ type: 'array', items: { type: 'integer' }, minItems: 1, maxItems: 3 })).toEqual({
      type: 'array',
      items: { type: 'integer' },
      minItems: 1,
      maxItems: 3,
    });
  });

  it('keeps enum, const, $ref, $defs and a recursive $ref to the root', () => {
    const input = {
      ...obj({ kind: { const: 'node' }, level: { enum: ['low', 'high'] }, child: { $ref: '#/$defs/child' }, next: { $ref: '#' } }),
      $defs: { child: obj({ id: { type: 'string' } }) },
    };
    expect(toStrictParameters(input)).toEqual(input);
  });
});

describe('toStrictParameters drops what the guide does not list, which only loosens', () => {
  it('drops minLength and maxLength: the guide lists only pattern and format for strings', () => {
    expect(converted({ type: 'string', minLength: 1, maxLength: 200, pattern: '^x' })).toEqual({ type: 'string', pattern: '^x' });
  });

  it('drops formats outside the documented list', () => {
    for (const format of ['uri', 'uri-reference', 'regex', 'idn-email', 'json-pointer']) {
      expect(converted({ type: 'string', format }), format).toEqual({ type: 'string' });
    }
  });

  it('drops the unsupported keywords that only narrow a value', () => {
    expect(
      converted({
        type: 'array',
        items: { type: 'string' },
        uniqueItems: true,
        contains: { const: 'a' },
        minContains: 1,
        maxContains: 2,
        unevaluatedItems: false,
        title: 'T',
        default: [],
        examples: [['a']],
        not: { const: [] },
      }),
    ).toEqual({ type: 'array', items: { type: 'string' } });
    expect(
      converted({
        type: 'object',
        additionalProperties: false,
        properties: { a: { type: 'string' } },
        required: ['a'],
        propertyNames: { pattern: '^a' },
        minProperties: 1,
        maxProperties: 1,
        dependentRequired: { a: [] },
        unevaluatedProperties: false,
      }),
    ).toEqual(obj({ a: { type: 'string' } }));
  });
});

describe('toStrictParameters reshapes objects and unions', () => {
  it('requires every property, makes the optional ones nullable and closes every object', () => {
    expect(
      toStrictParameters({
        type: 'object',
        unevaluatedProperties: false,
        required: ['a'],
        properties: {
          a: { type: 'string' },
          b: { type: 'integer' },
          c: { $ref: '#/$defs/c' },
          d: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
        },
        $defs: { c: { type: 'object', properties: { x: { type: 'boolean' } } } },
      }),
    ).toEqual({
      type: 'object',
      additionalProperties: false,
      required: ['a', 'b', 'c', 'd'],
      properties: {
        a: { type: 'string' },
        b: { type: ['integer', 'null'] },
        c: { anyOf: [{ $ref: '#/$defs/c' }, { type: 'null' }] },
        d: { anyOf: [{ type: 'string' }, { type: 'integer' }, { type: 'null' }] },
      },
      $defs: { c: { type: 'object', additionalProperties: false, required: ['x'], properties: { x: { type: ['boolean', 'null'] } } } },
    });
  });

  it('turns oneOf into anyOf', () => {
    expect(converted({ oneOf: [{ type: 'string' }, { type: 'integer' }] })).toEqual({ anyOf: [{ type: 'string' }, { type: 'integer' }] });
  });

  it('converts draft-07 definitions like $defs', () => {
    const out = toStrictParameters({
      ...obj({ a: { $ref: '#/definitions/a' } }),
      definitions: { a: { type: 'object', properties: { x: { type: 'string', minLength: 1 } } } },
    });
    expect(out['definitions']).toEqual({
      a: { type: 'object', additionalProperties: false, required: ['x'], properties: { x: { type: ['string', 'null'] } } },
    });
  });
});

describe('toStrictParameters refuses what cannot be expressed', () => {
  it.each(['allOf', 'if', 'then', 'else', 'patternProperties', 'dependentSchemas', 'prefixItems'])('%s', (keyword) => {
    const value = keyword === 'allOf' || keyword === 'prefixItems' ? [{ type: 'string' }] : { type: 'string' };
    const error = rejection(obj({ p: { type: 'array', [keyword]: value } }));
    expect(error.pointer).toBe('/properties/p');
    expect(error.message).toBe(`/properties/p: cannot be expressed in OpenAI strict mode: ${keyword}`);
  });

  it('a root that is not an object, or is a union', () => {
    expect(() => toStrictParameters({ type: 'string' })).toThrow(
      /^: cannot be expressed in OpenAI strict mode: the root must be an object schema$/,
    );
    expect(() => toStrictParameters(true)).toThrow(StrictSchemaError);
    for (const keyword of ['anyOf', 'oneOf']) {
      expect(rejection({ type: 'object', [keyword]: [obj({ a: { type: 'string' } }), obj({ b: { type: 'string' } })] }).message).toBe(
        `: cannot be expressed in OpenAI strict mode: the root must be an object, not ${keyword}`,
      );
    }
  });

  it('an object with additionalProperties other than false', () => {
    for (const additionalProperties of [true, { type: 'string' }]) {
      const error = rejection(obj({ map: { type: 'object', additionalProperties } }));
      expect(error.pointer).toBe('/properties/map/additionalProperties');
      expect(error.message).toMatch(/only additionalProperties: false is supported/);
    }
  });

  it('an object mixing properties with a union', () => {
    expect(rejection(obj({ p: { ...obj({ a: { type: 'string' } }), oneOf: [{ required: ['a'] }] } })).message).toMatch(
      /^\/properties\/p: .*an object mixing properties with oneOf\/anyOf$/,
    );
  });
});

describe('toStrictParameters enforces the documented limits', () => {
  it('states the limits of the guide', () => {
    expect(STRICT_LIMITS).toEqual({
      objectProperties: 5000,
      nestingDepth: 10,
      totalStringLength: 120_000,
      enumValues: 1000,
      largeEnumValues: 250,
      largeEnumStringLength: 15_000,
    });
  });

  it('allows 10 levels of nesting and refuses the 11th, naming where', () => {
    expect(() => toStrictParameters(nested(10, { type: 'string' }))).not.toThrow();
    const error = rejection(nested(11, { type: 'string' }));
    expect(error.pointer).toBe(`${'/properties/n'.repeat(10)}/properties/leaf`);
    expect(error.message).toMatch(/nesting depth 11 exceeds the limit of 10 levels/);
  });

  it('counts items and anyOf branches as levels, and measures the converted schema', () => {
    // An array of strings at the innermost level: the items are one level deeper.
    expect(() => toStrictParameters(nested(9, { type: 'array', items: { type: 'string' } }))).not.toThrow();
    expect(rejection(nested(10, { type: 'array', items: { type: 'string' } })).pointer).toMatch(/\/properties\/leaf\/items$/);
    // An optional enum is wrapped in anyOf [enum, null]: that wrapper is a level.
    expect(() => toStrictParameters(nested(10, { enum: ['a'] }))).not.toThrow();
    expect(rejection(nested(10, { enum: ['a'] }, true)).pointer).toMatch(/\/properties\/leaf\/anyOf\/0$/);
  });

  it('does not follow $ref when measuring depth, so recursion is fine', () => {
    expect(() => toStrictParameters(obj({ name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } }))).not.toThrow();
  });

  it('allows 5000 object properties in total and refuses 5001', () => {
    const props = (n: number, prefix: string): Schema =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, { type: 'boolean' }]));
    expect(() => toStrictParameters(obj({ ...props(4998, 'a'), b: obj(props(1, 'c')) }))).not.toThrow();
    expect(rejection(obj({ ...props(4999, 'a'), b: obj(props(1, 'c')) })).message).toBe(
      ': cannot be expressed in OpenAI strict mode: 5001 object properties exceed the limit of 5000',
    );
  });

  it('counts the properties inside $defs', () => {
    const many = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`d${i}`, { type: 'string' }]));
    const input = { ...obj({ x: { $ref: '#/$defs/big' } }), $defs: { big: { type: 'object', properties: many } } };
    expect(rejection(input).message).toMatch(/5001 object properties exceed the limit of 5000/);
  });

  it('refuses more than 120,000 characters across names, enum and const values', () => {
    const values = (n: number, length: number): string[] => Array.from({ length: n }, (_, i) => `${i}`.padStart(length, 'x'));
    // 'p' + 'e' + 100 values of 1,199 characters + 'c' + a const of 97 = 120,000.
    expect(() => toStrictParameters(obj({ p: obj({ e: { enum: values(100, 1199) }, c: { const: 'y'.repeat(97) } }) }))).not.toThrow();
    expect(rejection(obj({ p: obj({ e: { enum: values(100, 1199) }, c: { const: 'y'.repeat(98) } }) })).message).toBe(
      ': cannot be expressed in OpenAI strict mode: property names, definition names, enum and const values total 120001 characters, over the limit of 120000',
    );
  });

  it('refuses more than 1000 enum values across all enums', () => {
    const ints = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
    expect(() => toStrictParameters(obj({ a: { enum: ints(500) }, b: { enum: ints(500) } }))).not.toThrow();
    expect(rejection(obj({ a: { enum: ints(500) }, b: { enum: ints(501) } })).message).toMatch(/1001 enum values exceed the limit of 1000/);
  });

  it('caps an enum of more than 250 string values at 15,000 characters', () => {
    const strings = (n: number, length: number): string[] => Array.from({ length: n }, (_, i) => `${i}`.padStart(length, 'v'));
    expect(() => toStrictParameters(obj({ e: { enum: strings(250, 100) } }))).not.toThrow();
    expect(() => toStrictParameters(obj({ e: { enum: strings(251, 59) } }))).not.toThrow();
    const error = rejection(obj({ e: { enum: strings(251, 60) } }));
    expect(error.pointer).toBe('/properties/e/enum');
    expect(error.message).toMatch(/an enum of 251 string values totals 15060 characters; over 250 values the limit is 15000/);
  });
});
