/**
 * The JSON Schema (2020-12) subset of closed, discriminated tool input schemas. Loose on purpose:
 * schemas written as plain object literals (no `as const`) are accepted too.
 */
export interface JsonSchema {
  readonly $ref?: string;
  readonly $defs?: Readonly<Record<string, JsonSchema>>;
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | JsonSchema;
  readonly unevaluatedProperties?: boolean | JsonSchema;
  readonly items?: JsonSchema;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly oneOf?: readonly JsonSchema[];
  readonly anyOf?: readonly JsonSchema[];
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly format?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: number;
  readonly exclusiveMaximum?: number;
  readonly multipleOf?: number;
  readonly default?: unknown;
  readonly examples?: readonly unknown[];
  readonly [keyword: string]: unknown;
}

export const JsonType = {
  object: 'object',
  array: 'array',
  string: 'string',
  integer: 'integer',
  number: 'number',
  boolean: 'boolean',
  null: 'null',
} as const;
export type JsonType = (typeof JsonType)[keyof typeof JsonType];

/** Keywords that only annotate; they never make a value invalid. */
export const ANNOTATION_KEYWORDS: ReadonlySet<string> = new Set([
  '$schema',
  '$id',
  '$comment',
  '$defs',
  'definitions',
  'title',
  'description',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  'discriminator',
]);

/** Keywords the generator understands and satisfies. Anything else is refused. */
export const ASSERTION_KEYWORDS: ReadonlySet<string> = new Set([
  '$ref',
  'type',
  'properties',
  'required',
  'additionalProperties',
  'unevaluatedProperties',
  'items',
  'minItems',
  'maxItems',
  'enum',
  'const',
  'oneOf',
  'anyOf',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
]);

/** The JSON type of a value, with integers reported as `integer`. */
export function jsonTypeOf(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isInteger(value) ? 'integer' : 'number';
    default:
      return 'object';
  }
}

/** Whether a value of JSON type `actual` is accepted by a schema whose `type` lists `allowed`. */
export function typeAllows(allowed: readonly JsonType[], actual: JsonType): boolean {
  return allowed.includes(actual) || (actual === 'integer' && allowed.includes('number'));
}

/** One JSON-pointer reference token (RFC 6901). */
export function escapePointerToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

export function unescapePointerToken(token: string): string {
  return token.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** The number of Unicode code points, which is how JSON Schema measures string length. */
export function codePointLength(text: string): number {
  return [...text].length;
}

/** Structural equality for JSON values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length && ka.every((k) => k in b && jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}
