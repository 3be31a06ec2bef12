/**
 * Redaction of tool arguments for a trace, guided by the tool's input schema.
 *
 * A trace is safe to commit to a test suite: what the model typed as free text never reaches it.
 * What stays is what the schema already pins to a closed set or a shape, because replay needs it
 * to reach the same validation decision:
 *
 * - kept: values equal to a `const` or in an `enum` (so `kind` discriminators), strings that match
 *   their `pattern` (ids such as `C-1842`), date / time / uuid `format`s that look like one,
 *   numbers and booleans where the schema types them so, and `null`;
 * - masked: other `format`s (email, uri, hostname, ip): letters a-f become `a`, other letters `x`,
 *   digits `1`, punctuation stays, so the value keeps its shape and its validity;
 * - replaced: every free string becomes `'x'.repeat(length)` (length in code points, as JSON Schema
 *   counts it, so min/maxLength still hold); a string that failed its pattern or enum becomes a
 *   same-length string that fails it too;
 * - unknown fields (the boundary refused them) keep their name; their values are replaced by
 *   placeholders of the same JSON type (strings as above, numbers 0, booleans false), recursively.
 *
 * Objects and arrays keep their structure, so a valid call stays valid and an invalid one fails on
 * the same field.
 */

type SchemaObject = Readonly<Record<string, unknown>>;

const isObject = (value: unknown): value is SchemaObject => typeof value === 'object' && value !== null && !Array.isArray(value);

const codePoints = (text: string): number => [...text].length;

/** Formats whose values are a shape, not content: kept verbatim when they look like one. */
const SHAPE_FORMATS: Readonly<Record<string, RegExp>> = {
  date: /^\d{4}-\d{2}-\d{2}$/,
  time: /^\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$/,
  'date-time': /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/,
  duration: /^P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$/,
  uuid: /^(urn:uuid:)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
};

function maskFormatted(text: string): string {
  return text
    .replace(/[a-fA-F]/g, 'a')
    .replace(/\p{L}/gu, 'x')
    .replace(/\p{N}/gu, '1');
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typesOf(schema: SchemaObject): readonly unknown[] | undefined {
  const type: unknown = schema['type'];
  if (type === undefined) return undefined;
  return Array.isArray(type) ? (type as readonly unknown[]) : [type];
}

function admitsType(schema: SchemaObject, value: unknown): boolean {
  const types = typesOf(schema);
  if (types === undefined) return true;
  const t = jsonType(value);
  return types.includes(t) || (t === 'integer' && types.includes('number'));
}

function compilePattern(pattern: unknown): RegExp | undefined {
  if (typeof pattern !== 'string') return undefined;
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return undefined;
  }
}

/** A same-length string that `fails` rejects, for a value that was rejected; 'x's when none does. */
function failingPlaceholder(length: number, fails: (candidate: string) => boolean): string {
  for (const char of ['x', '~', '#', '0', ' ']) {
    const candidate = char.repeat(length);
    if (fails(candidate)) return candidate;
  }
  return 'x'.repeat(length);
}

/** A value of the same JSON type and structure with nothing of the original's content. */
export function placeholderOf(value: unknown): unknown {
  if (typeof value === 'string') return 'x'.repeat(codePoints(value));
  if (typeof value === 'number') return 0;
  if (typeof value === 'boolean') return false;
  if (Array.isArray(value)) return value.map(placeholderOf);
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, placeholderOf(v)]));
  return null;
}

class Redactor {
  constructor(private readonly root: unknown) {}

  /** Follows local `$ref`s (`#/$defs/x`); a remote or broken one leaves the value unconstrained. */
  private deref(schema: unknown): SchemaObject | undefined {
    let node = schema;
    for (let hops = 0; isObject(node) && typeof node['$ref'] === 'string'; hops += 1) {
      const ref = node['$ref'];
      if (!ref.startsWith('#') || hops > 32) return undefined;
      node = ref
        .slice(1)
        .split('/')
        .slice(1)
        .reduce<unknown>((at, token) => (isObject(at) ? at[token.replaceAll('~1', '/').replaceAll('~0', '~')] : undefined), this.root);
    }
    return isObject(node) ? node : undefined;
  }

  /** Whether a union branch is the one a value meant: its type admits it and its consts match. */
  private fits(branch: SchemaObject, value: unknown): boolean {
    if ('const' in branch && !deepEqual(branch['const'], value)) return false;
    if (Array.isArray(branch['enum']) && !branch['enum'].some((v) => deepEqual(v, value))) return false;
    if (!admitsType(branch, value)) return false;
    if (isObject(value) && isObject(branch['properties'])) {
      for (const [name, sub] of Object.entries(branch['properties'])) {
        const prop = this.deref(sub);
        if (prop !== undefined && 'const' in prop && Object.hasOwn(value, name) && !deepEqual(prop['const'], value[name])) return false;
      }
    }
    return true;
  }

  /** The schemas that apply to a value in place: the node, its allOf, and the union branch it meant. */
  private applicable(schema: unknown, value: unknown, out: SchemaObject[] = []): SchemaObject[] {
    const node = this.deref(schema);
    if (node === undefined) return out;
    out.push(node);
    if (Array.isArray(node['allOf'])) for (const sub of node['allOf']) this.applicable(sub, value, out);
    for (const keyword of ['oneOf', 'anyOf'] as const) {
      const branches: unknown = node[keyword];
      if (!Array.isArray(branches)) continue;
      const chosen = (branches as readonly unknown[]).find((b) => {
        const branch = this.deref(b);
        return branch !== undefined && this.fits(branch, value);
      });
      if (chosen !== undefined) this.applicable(chosen, value, out);
    }
    return out;
  }

  redact(schema: unknown, value: unknown): unknown {
    if (schema === undefined) return placeholderOf(value);
    const schemas = this.applicable(schema, value);
    if (value === null) return null;
    if (Array.isArray(value)) return this.array(schemas, value);
    if (isObject(value)) return this.object(schemas, value);
    if (schemas.some((s) => 'const' in s && deepEqual(s['const'], value))) return value;
    if (schemas.some((s) => Array.isArray(s['enum']) && s['enum'].some((v) => deepEqual(v, value)))) return value;
    const typed = schemas.filter((s) => typesOf(s)?.includes(jsonType(value)) ?? false);
    if (typeof value === 'boolean') return typed.length > 0 ? value : false;
    if (typeof value === 'number')
      return schemas.some((s) => typesOf(s)?.some((t) => t === 'number' || t === 'integer') ?? false) ? value : 0;
    if (typeof value === 'string') return this.string(schemas, value);
    return null;
  }

  private string(schemas: readonly SchemaObject[], value: string): string {
    const length = codePoints(value);
    const enums = schemas.flatMap((s) => (Array.isArray(s['enum']) ? [s['enum']] : []));
    if (enums.length > 0 || schemas.some((s) => 'const' in s)) {
      // Not one of the closed set (checked by the caller): a same-length value outside it too.
      return failingPlaceholder(length, (c) => !enums.some((e) => e.includes(c)) && !schemas.some((s) => s['const'] === c));
    }
    const patterns = schemas.flatMap((s) => {
      const re = compilePattern(s['pattern']);
      return re === undefined ? [] : [re];
    });
    if (patterns.length > 0) {
      if (patterns.every((re) => re.test(value))) return value;
      return failingPlaceholder(length, (c) => patterns.some((re) => !re.test(c)));
    }
    const format = schemas.map((s) => s['format']).find((f): f is string => typeof f === 'string');
    if (format !== undefined) {
      const shape = SHAPE_FORMATS[format];
      if (shape === undefined) return maskFormatted(value);
      return shape.test(value) ? value : 'x'.repeat(length);
    }
    return 'x'.repeat(length);
  }

  private array(schemas: readonly SchemaObject[], value: readonly unknown[]): unknown[] {
    return value.map((item, i) => {
      for (const s of schemas) {
        const prefix = s['prefixItems'];
        if (Array.isArray(prefix) && i < prefix.length) return this.redact(prefix[i], item);
        if (s['items'] !== undefined && s['items'] !== false) return this.redact(s['items'], item);
      }
      return placeholderOf(item);
    });
  }

  private object(schemas: readonly SchemaObject[], value: SchemaObject): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) out[key] = this.redact(this.propertySchema(schemas, key), member);
    return out;
  }

  /** The schema of a member; undefined for an unknown field, whose value is then replaced. */
  private propertySchema(schemas: readonly SchemaObject[], key: string): unknown {
    for (const s of schemas) {
      const props = s['properties'];
      if (isObject(props) && Object.hasOwn(props, key)) return props[key];
    }
    for (const s of schemas) {
      const patterns = s['patternProperties'];
      if (!isObject(patterns)) continue;
      for (const [pattern, sub] of Object.entries(patterns)) if (compilePattern(pattern)?.test(key) === true) return sub;
    }
    for (const s of schemas) {
      const extra = s['additionalProperties'];
      if (extra !== undefined && typeof extra !== 'boolean') return extra;
    }
    return undefined;
  }
}

/** The arguments of a call with every free value replaced, structure kept (see the file comment). */
export function redactArguments(inputSchema: unknown, args: unknown): unknown {
  return new Redactor(inputSchema).redact(inputSchema, args);
}
