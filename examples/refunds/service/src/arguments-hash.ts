import { createHash } from 'node:crypto';

/**
 * Canonical JSON of a schema-checked request body: object keys sorted, no whitespace. The bodies
 * hashed here hold only strings, integers and objects, for which this is RFC 8785's form.
 */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** sha256 (hex) of the canonical JSON of a request body: what an idempotency key is claimed for. */
export function argumentsSha256(value: unknown): string {
  return createHash('sha256').update(canonical(value), 'utf8').digest('hex');
}
