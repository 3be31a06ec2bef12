import { jsonTypeOf, typeAllows } from './json-schema.js';
import type { JsonType } from './json-schema.js';

/** One generated value for a single location, before it is placed into the whole document. */
export interface ScalarRule {
  readonly label: string;
  readonly value: unknown;
}

export interface BrokenRule extends ScalarRule {
  readonly keyword: string;
}

/** Wrong-type candidates by the location's main type: the mistakes models actually make first. */
function wrongTypeCandidates(primary: JsonType, minimal: unknown): readonly unknown[] {
  switch (primary) {
    case 'string':
      return [42, true, null];
    case 'integer':
    case 'number':
      return [String(minimal), true, null];
    case 'boolean':
      return ['true', 1, null];
    case 'null':
      return ['null', 0];
    case 'array':
      return [{}, 'a', 0];
    case 'object':
      return [[], 'a', 0];
  }
}

/** A value of a JSON type the location does not allow, or undefined when `type` is absent. */
export function wrongType(declared: readonly JsonType[], primary: JsonType, minimal: unknown): BrokenRule | undefined {
  if (declared.length === 0) return undefined;
  const value = wrongTypeCandidates(primary, minimal).find((v) => !typeAllows(declared, jsonTypeOf(v)));
  if (value === undefined) return undefined;
  const actual = jsonTypeOf(value) === 'integer' ? 'number' : jsonTypeOf(value);
  return { label: `wrong type ${actual} instead of ${declared.join('|')}`, value, keyword: 'type' };
}

/** The first type in `type` that is not `null`, which is the type the minimal value takes. */
export function primaryOf(declared: readonly JsonType[], fallback: JsonType): JsonType {
  return declared.find((t) => t !== 'null') ?? declared[0] ?? fallback;
}

/** A value absent from `values`, of the same JSON type as the first one where possible. */
export function outsideOf(values: readonly unknown[], preferred: string): unknown {
  const taken = new Set(values.map((v) => JSON.stringify(v)));
  const first = values[0];
  const candidates: unknown[] =
    typeof first === 'number'
      ? [Math.max(...values.filter((v): v is number => typeof v === 'number')) + 1]
      : typeof first === 'boolean'
        ? [!first]
        : [];
  candidates.push(preferred, `${preferred}_2`, `${preferred}_3`);
  return candidates.find((c) => !taken.has(JSON.stringify(c)));
}
