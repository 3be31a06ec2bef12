// Converts a tool's input schema to the subset OpenAI function calling accepts with `strict: true`
// (Structured Outputs guide, "Supported schemas", checked 2026): every object lists ALL its
// properties in `required` and has `additionalProperties: false`; an optional property becomes
// nullable; `oneOf` becomes `anyOf`. Kept: type, description, properties, required,
// additionalProperties, items, enum, const, anyOf, $ref, $defs; strings: pattern, minLength,
// maxLength, format (date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid only);
// numbers: minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf; arrays: minItems,
// maxItems. Every other keyword is dropped (title, default, examples, uniqueItems, propertyNames,
// min/maxProperties, dependentRequired, not, other formats …): that only loosens what the model is
// told, and the boundary still validates against the full schema. Keywords whose removal would
// change the shape (allOf, if/then/else, patternProperties, dependentSchemas, prefixItems, an
// object that mixes properties with a union) cannot be converted and throw.
import { isObjectSchema, isSchemaObject, propertiesOf, requiredOf } from './schema-walk.js';
import type { SchemaObject } from './schema-walk.js';

const KEPT = new Set([
  'type', 'description', 'enum', 'const', '$ref', 'pattern', 'minLength', 'maxLength', 'minimum', 'maximum',
  'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minItems', 'maxItems',
]);
const FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
const UNCONVERTIBLE = ['allOf', 'if', 'then', 'else', 'patternProperties', 'dependentSchemas', 'prefixItems'];

export class StrictSchemaError extends Error {
  constructor(readonly pointer: string, reason: string) {
    super(`${pointer}: cannot be expressed in OpenAI strict mode: ${reason}`);
    this.name = 'StrictSchemaError';
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
  const defs = schema['$defs'];
  if (isSchemaObject(defs)) {
    out['$defs'] = Object.fromEntries(Object.entries(defs).map(([k, v]) => [k, convert(v, `${pointer}/$defs/${k}`)]));
  }
  if (isObjectSchema(schema) && !Array.isArray(union)) {
    const required = new Set(requiredOf(schema));
    const properties: Record<string, unknown> = {};
    for (const [name, sub] of Object.entries(propertiesOf(schema))) {
      const converted = convert(sub, `${pointer}/properties/${name}`);
      properties[name] = required.has(name) ? converted : nullable(converted);
    }
    out['type'] = 'object';
    out['properties'] = properties;
    out['required'] = Object.keys(properties);
    out['additionalProperties'] = false;
  }
  return out;
}

/** The strict-mode form of an input schema (root must be an object schema). */
export function toStrictParameters(input: SchemaObject | boolean): Record<string, unknown> {
  if (!isObjectSchema(input)) throw new StrictSchemaError('', 'the root must be an object schema');
  return convert(input, '') as Record<string, unknown>;
}
