// The `field` label of a validation failure: its JSON pointer with every token the schema does not
// name (array indices, map keys, the name of an unknown field an agent sent) replaced by `*`. The
// label's values are thereby bounded by the schema, and no value an agent chose can appear in one.

type SchemaNode = Readonly<Record<string, unknown>>;

const WILDCARD = '*';
/** Deeper pointers are cut here (`…/*`): a recursive schema must not yield unbounded labels. */
const MAX_DEPTH = 8;
/** Applicators whose subschemas see the same instance as their parent. */
const IN_PLACE = ['allOf', 'anyOf', 'oneOf', 'then', 'else'] as const;

const isNode = (value: unknown): value is SchemaNode => typeof value === 'object' && value !== null && !Array.isArray(value);

function resolveLocal(root: unknown, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const token = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    node = isNode(node) && Object.hasOwn(node, token) ? node[token] : undefined;
  }
  return node;
}

/** `schema` and every subschema that applies in place to the same instance, local `$ref`s followed. */
function inPlace(root: unknown, schema: unknown, out: SchemaNode[] = [], seen = new Set<unknown>()): SchemaNode[] {
  if (!isNode(schema) || seen.has(schema)) return out;
  seen.add(schema);
  out.push(schema);
  if (typeof schema['$ref'] === 'string') inPlace(root, resolveLocal(root, schema['$ref']), out, seen);
  for (const keyword of IN_PLACE) {
    const sub = schema[keyword];
    if (Array.isArray(sub)) for (const branch of sub) inPlace(root, branch, out, seen);
    else inPlace(root, sub, out, seen);
  }
  return out;
}

/** Subschemas that apply to a member the schema does not name: items, additional or pattern properties. */
function unnamedMembers(schema: SchemaNode): unknown[] {
  const members: unknown[] = [schema['items'], schema['additionalProperties'], schema['unevaluatedProperties']];
  if (Array.isArray(schema['prefixItems'])) members.push(...(schema['prefixItems'] as unknown[]));
  if (isNode(schema['patternProperties'])) members.push(...Object.values(schema['patternProperties']));
  return members.filter(isNode);
}

/**
 * The bounded form of `pointer` (a JSON pointer into a value validated by `schema`): tokens that are
 * property names the schema declares are kept; any other token becomes `*`.
 */
export function fieldLabel(schema: unknown, pointer: string): string {
  if (pointer === '') return '';
  if (!pointer.startsWith('/')) return WILDCARD;
  const tokens = pointer.slice(1).split('/');
  const out: string[] = [];
  let nodes: SchemaNode[] = inPlace(schema, schema);
  for (const raw of tokens.slice(0, MAX_DEPTH)) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    const named = nodes.flatMap((node) => {
      const properties = node['properties'];
      return isNode(properties) && Object.hasOwn(properties, token) ? [properties[token]] : [];
    });
    if (named.length > 0) {
      out.push(raw);
      nodes = named.flatMap((sub) => inPlace(schema, sub));
    } else {
      out.push(WILDCARD);
      nodes = nodes.flatMap(unnamedMembers).flatMap((sub) => inPlace(schema, sub));
    }
  }
  if (tokens.length > MAX_DEPTH) out.push(WILDCARD);
  return `/${out.join('/')}`;
}
