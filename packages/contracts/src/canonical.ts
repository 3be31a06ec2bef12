import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { GatehouseError } from './gatehouse-error.js';
import { escapePointerToken } from './schema-walk.js';

/**
 * A value that has no RFC 8785 form: `undefined` (anywhere, including object members), functions,
 * symbols, bigints, non-finite numbers, strings with lone surrogates, non-plain objects (Map, Date,
 * class instances) and cycles. `field` is the JSON pointer of the first such value.
 */
export class CanonicalJsonError extends GatehouseError<'INVALID_ARGUMENT'> {
  readonly field: string;

  constructor(field: string, reason: string) {
    super('INVALID_ARGUMENT', `Value at ${field === '' ? '(root)' : field} cannot be represented as canonical JSON: ${reason}`);
    this.field = field;
  }
}

// A string whose UTF-16 holds a lone surrogate has no UTF-8 form (String.prototype.isWellFormed,
// ES2024, on every Node Gatehouse runs on).
const wellFormed = String.prototype as unknown as { isWellFormed(this: string): boolean };
function hasLoneSurrogate(text: string): boolean {
  return !wellFormed.isWellFormed.call(text);
}

// The JSON pointer of the value at `path` (keys and indexes from the root): made only for an error.
function pointerOf(path: readonly (string | number)[]): string {
  return path.map((token) => `/${typeof token === 'number' ? token : escapePointerToken(token)}`).join('');
}

// Rejects what canonicalize would silently drop, turn into null, or render as invalid JSON
// (a function member, for instance, becomes `"key":undefined`). `path` holds the keys and indexes
// down to `value` (pushed and popped on the way), so a pointer is only made for a value refused.
function assertJsonValue(value: unknown, path: (string | number)[], stack: Set<object>): void {
  switch (typeof value) {
    case 'string':
      if (hasLoneSurrogate(value)) throw new CanonicalJsonError(pointerOf(path), 'a string with a lone surrogate');
      return;
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new CanonicalJsonError(pointerOf(path), 'a non-finite number');
      return;
    case 'object':
      break;
    default:
      throw new CanonicalJsonError(pointerOf(path), `a value of type ${typeof value}`);
  }
  if (value === null) return;
  if (stack.has(value)) throw new CanonicalJsonError(pointerOf(path), 'a circular reference');
  stack.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      assertJsonValue(value[i], path, stack);
      path.pop();
    }
  } else {
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) throw new CanonicalJsonError(pointerOf(path), 'a non-plain object');
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      path.push(key);
      if (hasLoneSurrogate(key)) throw new CanonicalJsonError(pointerOf(path), 'a key with a lone surrogate');
      assertJsonValue((value as Record<string, unknown>)[key], path, stack);
      path.pop();
    }
  }
  stack.delete(value);
}

/** RFC 8785 (JCS) canonical JSON. Throws CanonicalJsonError for values JSON cannot represent. */
export function canonicalJson(value: unknown): string {
  assertJsonValue(value, [], new Set());
  const text = canonicalize(value);
  if (text === undefined) throw new CanonicalJsonError('', 'no JSON form');
  return text;
}

/** Lower-case hex SHA-256 of the UTF-8 bytes of `text`. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export interface CanonicalArguments {
  readonly canonical: string;
  readonly sha256: string;
}

/** The canonical form of tool arguments and its `arguments_sha256`. */
export function canonicalArguments(value: unknown): CanonicalArguments {
  const canonical = canonicalJson(value);
  return { canonical, sha256: sha256Hex(canonical) };
}
