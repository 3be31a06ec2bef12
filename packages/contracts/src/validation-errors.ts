// Turns Ajv errors into `details` an agent can act on: each names the JSON pointer of the offending
// argument and never echoes its value. Unions are narrowed to the branch the value meant.
import type { ErrorObject } from 'ajv/dist/2020.js';
import { derefLocal, escapePointerToken, findDiscriminator, isObjectSchema, isSchemaObject, resolvePointer } from './schema-walk.js';
import type { SchemaObject } from './schema-walk.js';

export interface ValidationDetail {
  /** JSON pointer into the validated value; '' is the value itself. */
  readonly field: string;
  readonly keyword: string;
  readonly message: string;
}

interface Scope {
  readonly instancePath: string;
  readonly schemaPrefixes: readonly string[];
}

const within = (path: string, base: string): boolean => path === base || path.startsWith(`${base}/`);

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function accepts(branch: unknown, value: unknown): boolean {
  if (!isSchemaObject(branch) || branch['type'] === undefined) return true;
  const types: unknown[] = Array.isArray(branch['type']) ? branch['type'] : [branch['type']];
  const t = jsonType(value);
  return types.includes(t) || (t === 'integer' && types.includes('number'));
}

/**
 * The branch a value meant: the one whose discriminator `const` it carries, else the only branch
 * whose `type` admits it. `missing` when the value is an object without the discriminator;
 * `unmatched` when its discriminator matches no branch.
 */
type Choice =
  | { readonly kind: 'branch'; readonly index: number }
  | { readonly kind: 'missing' | 'unmatched'; readonly property: string; readonly values: readonly string[] }
  | { readonly kind: 'none' };

function chooseBranch(schema: unknown, branches: readonly unknown[], value: unknown): Choice {
  const objectIdx = branches.map((_, i) => i).filter((i) => isObjectSchema(derefLocal(schema, branches[i])));
  if (isSchemaObject(value) && objectIdx.length >= 2) {
    const disc = findDiscriminator(
      schema,
      objectIdx.map((i) => branches[i]),
    );
    if (disc !== undefined) {
      if (!Object.hasOwn(value, disc.property)) return { kind: 'missing', property: disc.property, values: disc.values };
      const k = disc.values.indexOf(JSON.stringify(value[disc.property]));
      const index = objectIdx[k];
      return index === undefined ? { kind: 'unmatched', property: disc.property, values: disc.values } : { kind: 'branch', index };
    }
  }
  const fitting = branches.map((_, i) => i).filter((i) => accepts(derefLocal(schema, branches[i]), value));
  return fitting.length === 1 && fitting[0] !== undefined ? { kind: 'branch', index: fitting[0] } : { kind: 'none' };
}

function branchPrefixes(unionPath: string, branch: unknown, index: number): string[] {
  const prefixes = [`${unionPath}/${index}/`];
  // Ajv reports errors inside a local `$ref` at the referenced location (`#/$defs/saved/...`).
  if (isSchemaObject(branch) && typeof branch['$ref'] === 'string' && branch['$ref'].startsWith('#')) {
    prefixes.push(`${branch['$ref']}/`);
  }
  return prefixes;
}

function toDetail(e: ErrorObject): ValidationDetail {
  const params = e.params as Record<string, unknown>;
  const at = (name: unknown): string => `${e.instancePath}/${escapePointerToken(String(name))}`;
  switch (e.keyword) {
    case 'additionalProperties':
      return { field: at(params['additionalProperty']), keyword: e.keyword, message: 'is not allowed: unknown field' };
    case 'unevaluatedProperties':
      return { field: at(params['unevaluatedProperty']), keyword: e.keyword, message: 'is not allowed: unknown field' };
    case 'required':
    case 'dependentRequired':
      return { field: at(params['missingProperty']), keyword: e.keyword, message: 'is required' };
    case 'const':
      return { field: e.instancePath, keyword: e.keyword, message: `must be ${JSON.stringify(params['allowedValue'])}` };
    case 'enum': {
      const allowed = Array.isArray(params['allowedValues']) ? params['allowedValues'] : [];
      return { field: e.instancePath, keyword: e.keyword, message: `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}` };
    }
    default:
      // Ajv's messages name schema limits ("must match pattern ...", "must be <= 50"), never data.
      return { field: e.instancePath, keyword: e.keyword, message: e.message ?? `fails ${e.keyword}` };
  }
}

/** Details in Ajv's order, with union failures narrowed to the branch the value meant. */
export function describeErrors(schema: SchemaObject | boolean, data: unknown, errors: readonly ErrorObject[]): ValidationDetail[] {
  const suppressed: Scope[] = [];
  const replaced = new Map<ErrorObject, ValidationDetail | null>();
  const isSuppressed = (e: ErrorObject): boolean =>
    suppressed.some((s) => within(e.instancePath, s.instancePath) && s.schemaPrefixes.some((p) => e.schemaPath.startsWith(p)));
  const unions = errors
    .filter((e) => e.keyword === 'oneOf' || e.keyword === 'anyOf')
    .sort((a, b) => a.schemaPath.length - b.schemaPath.length);
  for (const u of unions) {
    if (isSuppressed(u)) continue;
    const branches = resolvePointer(schema, u.schemaPath);
    const passing = (u.params as { passingSchemas?: unknown }).passingSchemas;
    if (!Array.isArray(branches) || (passing !== undefined && passing !== null)) continue;
    const choice = chooseBranch(schema, branches, resolvePointer(data, u.instancePath));
    const others = branches.map((b: unknown, i) => ({ b, i })).filter(({ i }) => choice.kind !== 'branch' || i !== choice.index);
    suppressed.push({
      instancePath: u.instancePath,
      schemaPrefixes: others.flatMap(({ b, i }) => branchPrefixes(u.schemaPath, b, i)),
    });
    if (choice.kind === 'branch') replaced.set(u, null);
    else if (choice.kind !== 'none') {
      const field = `${u.instancePath}/${escapePointerToken(choice.property)}`;
      replaced.set(
        u,
        choice.kind === 'missing'
          ? { field, keyword: 'required', message: 'is required' }
          : { field, keyword: u.keyword, message: `must be one of ${choice.values.join(', ')}` },
      );
    }
  }
  const details: ValidationDetail[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    const detail = replaced.has(e) ? replaced.get(e) : isSuppressed(e) ? null : toDetail(e);
    if (detail === null || detail === undefined) continue;
    const key = `${detail.field}\u0000${detail.keyword}\u0000${detail.message}`;
    if (!seen.has(key)) details.push(detail);
    seen.add(key);
  }
  return details;
}
