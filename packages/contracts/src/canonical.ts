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

function hasLoneSurrogate(text: string): boolean {
  return /\p{Surrogate}/u.test(text);
}

// Rejects what canonicalize would silently drop, turn into null, or render as invalid JSON
// (a function member, for instance, becomes `"key":undefined`).
function assertJsonValue(value: unknown, pointer: string, stack: Set<object>): void {
  switch (typeof value) {
    case 'string':
      if (hasLoneSurrogate(value)) throw new CanonicalJsonError(pointer, 'a string with a lone surrogate');
      return;
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new CanonicalJsonError(pointer, 'a non-finite number');
      return;
    case 'object':
      break;
    default:
      throw new CanonicalJsonError(pointer, `a value of type ${typeof value}`);
  }
  if (value === null) return;
  if (stack.has(value)) throw new CanonicalJsonError(pointer, 'a circular reference');
  stack.add(value);
  if (Array.isArray(value)) {
    value.forEach((item, i) => assertJsonValue(item, `${pointer}/${i}`, stack));
  } else {
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) throw new CanonicalJsonError(pointer, 'a non-plain object');
    for (const [key, member] of Object.entries(value)) {
      const at = `${pointer}/${escapePointerToken(key)}`;
      if (hasLoneSurrogate(key)) throw new CanonicalJsonError(at, 'a key with a lone surrogate');
      assertJsonValue(member, at, stack);
    }
  }
  stack.delete(value);
}

/** RFC 8785 (JCS) canonical JSON. Throws CanonicalJsonError for values JSON cannot represent. */
export function canonicalJson(value: unknown): string {
  assertJsonValue(value, '', new Set());
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
