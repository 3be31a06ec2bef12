// Converts a tool's input schema to the subset OpenAI function calling accepts with `strict: true`
// (OpenAI's Structured Outputs guide, "Supported schemas"). Every object lists all its properties
// in `required` and sets `additionalProperties: false`; an optional property becomes nullable;
// `oneOf` becomes `anyOf`, `definitions` is treated as `$defs`. Keywords outside the subset (KEPT
// below) are dropped: that only loosens what the model is told, since the boundary still validates
// against the full schema. Keywords whose removal would change the shape throw (allOf,
// if/then/else, patternProperties, prefixItems, open additionalProperties, a root union), and so do
// the guide's size limits (STRICT_LIMITS below). Where the guide is silent, this follows OpenAI's own SDKs.
import { GatehouseError } from './gatehouse-error.js';
import { escapePointerToken, isObjectSchema, isSchemaObject, propertiesOf, requiredOf } from './schema-walk.js';
import type { SchemaObject } from './schema-walk.js';

const KEPT = new Set([
  'type',
  'description',
  'enum',
  'const',
  '$ref',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
]);
const FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
const UNCONVERTIBLE = ['allOf', 'if', 'then', 'else', 'patternProperties', 'dependentSchemas', 'prefixItems'];
const DEFINITIONS = ['$defs', 'definitions'] as const;

/** The guide's documented size limits ("Supported schemas", checked 2026-11-30). */
export const STRICT_LIMITS = {
  objectProperties: 5000,
  nestingDepth: 10,
  totalStringLength: 120_000,
  enumValues: 1000,
  /** An enum with more than this many string values … */
  largeEnumValues: 250,
  /** … may total at most this many characters. */
  largeEnumStringLength: 15_000,
} as const;

export class StrictSchemaError extends GatehouseError<'SCHEMA_NOT_STRICT'> {
  constructor(
    readonly pointer: string,
    reason: string,
  ) {
    super('SCHEMA_NOT_STRICT', `${pointer}: cannot be expressed in OpenAI strict mode: ${reason}`);
  }
}

function nullable(schema: unknown): unknown {
  if (!isSchemaObject(schema)) return schema;
  const type = schema['type'];
  if (Array.isArray(schema['anyOf'])) {
    const branches: unknown[] = schema['anyOf'];
    const hasNull = branches.some((b) => isSchemaObject(b) && b['type'] === 'null');
    return hasNull ? schema : { ...schema, anyOf: [...branches, { type: 'null' }] };
  }
  if (!('const' in schema) && !('enum' in schema) && !('$ref' in schema)) {
    if (typeof type === 'string') return type === 'null' ? schema : { ...schema, type: [type, 'null'] };
    if (Array.isArray(type)) return type.includes('null') ? schema : { ...schema, type: [...(type as unknown[]), 'null'] };
  }
  return { anyOf: [schema, { type: 'null' }] };
}

function convert(schema: unknown, pointer: string): unknown {
  if (!isSchemaObject(schema)) throw new StrictSchemaError(pointer, 'boolean schemas are not supported');
  for (const keyword of UNCONVERTIBLE) if (keyword in schema) throw new StrictSchemaError(pointer, keyword);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (KEPT.has(key)) out[key] = value;
    if (key === 'format' && typeof value === 'string' && FORMATS.has(value)) out[key] = value;
  }
  const union = schema['oneOf'] ?? schema['anyOf'];
  if (Array.isArray(union)) {
    if ('properties' in schema) throw new StrictSchemaError(pointer, 'an object mixing properties with oneOf/anyOf');
    const keyword = 'oneOf' in schema ? 'oneOf' : 'anyOf';
    out['anyOf'] = union.map((branch: unknown, i) => convert(branch, `${pointer}/${keyword}/${i}`));
  }
  if ('items' in schema) out['items'] = convert(schema['items'], `${pointer}/items`);
  for (const keyword of DEFINITIONS) {
    const defs = schema[keyword];
    if (!isSchemaObject(defs)) continue;
    out[keyword] = Object.fromEntries(
      Object.entries(defs).map(([k, v]) => [k, convert(v, `${pointer}/${keyword}/${escapePointerToken(k)}`)]),
    );
  }
  if (isObjectSchema(schema)) {
    const additional = schema['additionalProperties'];
    if (additional !== undefined && additional !== false) {
      throw new StrictSchemaError(`${pointer}/additionalProperties`, 'only additionalProperties: false is supported');
    }
  }
  if (isObjectSchema(schema) && !Array.isArray(union)) {
    const required = new Set(requiredOf(schema));
    const properties: Record<string, unknown> = {};
    for (const [name, sub] of Object.entries(propertiesOf(schema))) {
      const converted = convert(sub, `${pointer}/properties/${escapePointerToken(name)}`);
      properties[name] = required.has(name) ? converted : nullable(converted);
    }
    out['type'] = 'object';
    out['properties'] = properties;
    out['required'] = Object.keys(properties);
    out['additionalProperties'] = false;
  }
  return out;
}

/** Length of an enum or const value as the limits count it: a string's own length, else its JSON text. */
function textLength(value: unknown): number {
  return typeof value === 'string' ? value.length : (JSON.stringify(value) ?? '').length;
}

interface Tally {
  properties: number;
  stringLength: number;
  enumValues: number;
}

/** Walks the converted schema, counting what the guide limits; throws at a nesting level past the limit. */
function measure(schema: unknown, pointer: string, depth: number, tally: Tally): void {
  if (!isSchemaObject(schema)) return;
  if (depth > STRICT_LIMITS.nestingDepth) {
    throw new StrictSchemaError(
      pointer,
      `nesting depth ${depth} exceeds the limit of ${STRICT_LIMITS.nestingDepth} levels (counted on the converted schema)`,
    );
  }
  const values = schema['enum'];
  if (Array.isArray(values)) {
    tally.enumValues += values.length;
    let enumLength = 0;
    let strings = 0;
    for (const value of values as unknown[]) {
      tally.stringLength += textLength(value);
      if (typeof value === 'string') {
        strings += 1;
        enumLength += value.length;
      }
    }
    if (strings > STRICT_LIMITS.largeEnumValues && enumLength > STRICT_LIMITS.largeEnumStringLength) {
      throw new StrictSchemaError(
        `${pointer}/enum`,
        `an enum of ${strings} string values totals ${enumLength} characters; over ${STRICT_LIMITS.largeEnumValues} values ` +
          `the limit is ${STRICT_LIMITS.largeEnumStringLength}`,
      );
    }
  }
  if ('const' in schema) tally.stringLength += textLength(schema['const']);
  for (const keyword of ['properties', ...DEFINITIONS]) {
    const map = schema[keyword];
    if (!isSchemaObject(map)) continue;
    for (const [name, sub] of Object.entries(map)) {
      if (keyword === 'properties') tally.properties += 1;
      tally.stringLength += name.length;
      measure(sub, `${pointer}/${keyword}/${escapePointerToken(name)}`, depth + 1, tally);
    }
  }
  measure(schema['items'], `${pointer}/items`, depth + 1, tally);
  const branches = schema['anyOf'];
  if (Array.isArray(branches)) branches.forEach((branch: unknown, i) => measure(branch, `${pointer}/anyOf/${i}`, depth + 1, tally));
}

function checkLimits(schema: Record<string, unknown>): void {
  const tally: Tally = { properties: 0, stringLength: 0, enumValues: 0 };
  measure(schema, '', 0, tally);
  if (tally.properties > STRICT_LIMITS.objectProperties) {
    throw new StrictSchemaError('', `${tally.properties} object properties exceed the limit of ${STRICT_LIMITS.objectProperties}`);
  }
  if (tally.stringLength > STRICT_LIMITS.totalStringLength) {
    throw new StrictSchemaError(
      '',
      `property names, definition names, enum and const values total ${tally.stringLength} characters, over the limit of ` +
        `${STRICT_LIMITS.totalStringLength}`,
    );
  }
  if (tally.enumValues > STRICT_LIMITS.enumValues) {
    throw new StrictSchemaError('', `${tally.enumValues} enum values exceed the limit of ${STRICT_LIMITS.enumValues}`);
  }
}

/** The strict-mode form of an input schema (root must be an object schema, not a union). */
export function toStrictParameters(input: SchemaObject | boolean): Record<string, unknown> {
  if (!isObjectSchema(input)) throw new StrictSchemaError('', 'the root must be an object schema');
  for (const keyword of ['anyOf', 'oneOf']) {
    if (keyword in input) throw new StrictSchemaError('', `the root must be an object, not ${keyword}`);
  }
  const out = convert(input, '') as Record<string, unknown>;
  checkLimits(out);
  return out;
}
