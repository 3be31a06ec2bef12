import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/** sha256 (hex) of the RFC 8785 canonical JSON of `value`. */
export function argumentsSha256(value: unknown): string {
  const canonical = canonicalize(value);
  if (canonical === undefined) throw new Error('arguments are not JSON-serializable');
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}
