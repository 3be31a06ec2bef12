// Traversal of JSON Schema 2020-12 documents as plain data: where subschemas live, JSON pointers,
// local `$ref` resolution and discriminator discovery. Shared by the lint, the validation-error
// mapping and the exports, so all three read a schema the same way.

export type SchemaObject = Readonly<Record<string, unknown>>;

export function isSchemaObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function escapePointerToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

function unescapePointerToken(token: string): string {
  return token.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** Resolves a JSON pointer (`/a/0/b`, or `#/a/0/b`) inside `root`; undefined when absent. */
export function resolvePointer(root: unknown, pointer: string): unknown {
  const fragment = pointer.startsWith('#');
  const path = fragment ? pointer.slice(1) : pointer;
  if (path === '') return root;
  if (!path.startsWith('/')) return undefined;
  let node: unknown = root;
  for (const raw of path.slice(1).split('/')) {
    let token: string;
    try {
      token = unescapePointerToken(fragment ? decodeURIComponent(raw) : raw);
    } catch {
      return undefined;
    }
    if (Array.isArray(node)) node = /^(0|[1-9][0-9]*)$/.test(token) ? node[Number(token)] : undefined;
    else if (isSchemaObject(node)) node = Object.hasOwn(node, token) ? node[token] : undefined;
    else return undefined;
  }
  return node;
}

/** Follows local `$ref`s (`#/$defs/x`) until a schema without one; cycles and remote refs stop it. */
export function derefLocal(root: unknown, schema: unknown): unknown {
  let node = schema;
  const seen = new Set<unknown>();
  while (isSchemaObject(node) && typeof node['$ref'] === 'string' && node['$ref'].startsWith('#') && !seen.has(node)) {
    seen.add(node);
    node = resolvePointer(root, node['$ref']);
  }
  return node;
}

/** Keywords whose value is one subschema. */
const SINGLE = [
  'items',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'contentSchema',
  'additionalItems',
] as const;
/** Keywords whose value is a map of name → subschema. */
const MAP = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'] as const;
/** Keywords whose value is an array of subschemas. */
const LIST = ['prefixItems', 'allOf', 'anyOf', 'oneOf'] as const;
/** Applicators that apply in place to the same instance (their subschemas see the parent's object). */
export const IN_PLACE = new Set(['allOf', 'anyOf', 'oneOf', 'if', 'then', 'else', 'not', 'dependentSchemas']);

export interface Subschema {
  readonly schema: unknown;
  readonly pointer: string;
  readonly keyword: string;
}

/** The direct subschemas of `schema`, each with its JSON pointer under `pointer`. */
export function subschemas(schema: SchemaObject, pointer: string): Subschema[] {
  const out: Subschema[] = [];
  for (const keyword of SINGLE) {
    if (keyword in schema) out.push({ schema: schema[keyword], pointer: `${pointer}/${keyword}`, keyword });
  }
  for (const keyword of MAP) {
    const map = schema[keyword];
    if (!isSchemaObject(map)) continue;
    for (const [name, sub] of Object.entries(map)) {
      out.push({ schema: sub, pointer: `${pointer}/${keyword}/${escapePointerToken(name)}`, keyword });
    }
  }
  for (const keyword of LIST) {
    const list = schema[keyword];
    if (!Array.isArray(list)) continue;
    list.forEach((sub: unknown, i) => out.push({ schema: sub, pointer: `${pointer}/${keyword}/${i}`, keyword }));
  }
  return out;
}

function typeIncludes(schema: SchemaObject, type: string): boolean {
  const t = schema['type'];
  return t === type || (Array.isArray(t) && t.includes(type));
}

/** An object schema: `type` is or contains `object`, or it declares `properties` / `required`. */
export function isObjectSchema(schema: unknown): schema is SchemaObject {
  return isSchemaObject(schema) && (typeIncludes(schema, 'object') || 'properties' in schema || 'required' in schema);
}

export function isClosed(schema: SchemaObject): boolean {
  return schema['additionalProperties'] === false || schema['unevaluatedProperties'] === false;
}

export function propertiesOf(schema: SchemaObject): SchemaObject {
  const props = schema['properties'];
  return isSchemaObject(props) ? props : {};
}

export function requiredOf(schema: SchemaObject): readonly string[] {
  const required = schema['required'];
  return Array.isArray(required) ? required.filter((r): r is string => typeof r === 'string') : [];
}

export interface Discriminator {
  readonly property: string;
  /** The `const` of each branch, in branch order (JSON text, so values of any type compare). */
  readonly values: readonly string[];
}

/**
 * The discriminator of union branches: a property every branch requires and pins with a distinct
 * `const`. `kind` is preferred when it qualifies. Branches are dereferenced through local `$ref`s.
 */
export function findDiscriminator(root: unknown, branches: readonly unknown[]): Discriminator | undefined {
  const resolved = branches.map((b) => derefLocal(root, b));
  const first = resolved[0];
  if (!isSchemaObject(first)) return undefined;
  const candidates = Object.keys(propertiesOf(first)).sort((a, b) => Number(b === 'kind') - Number(a === 'kind'));
  for (const property of candidates) {
    const values: string[] = [];
    for (const branch of resolved) {
      if (!isSchemaObject(branch) || !requiredOf(branch).includes(property)) break;
      const prop = derefLocal(root, propertiesOf(branch)[property]);
      if (!isSchemaObject(prop) || !('const' in prop)) break;
      values.push(JSON.stringify(prop['const']));
    }
    if (values.length === resolved.length && new Set(values).size === values.length) return { property, values };
  }
  return undefined;
}
