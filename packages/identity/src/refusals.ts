import { timingSafeEqual } from 'node:crypto';
import { IDENTITY_REFUSALS } from '@gatehouse/contracts';
import type { IdentityRefusalCode } from '@gatehouse/contracts';
import type { TokenRefusal } from './token-verifier.js';

/**
 * Every refusal of who a caller is, with its HTTP status, comes from the one catalogue
 * (`IDENTITY_REFUSALS` of @gatehouse/contracts). An API answers `{ error: { code, message } }`;
 * a 401 carries `WWW-Authenticate`.
 */
export { IDENTITY_REFUSALS };
export type { IdentityRefusalCode };

const BY_TOKEN_REFUSAL: Readonly<Record<TokenRefusal, IdentityRefusalCode>> = {
  malformed: 'TOKEN_MALFORMED',
  wrong_type: 'TOKEN_TYPE_INVALID',
  wrong_issuer: 'TOKEN_ISSUER_UNKNOWN',
  wrong_audience: 'TOKEN_AUDIENCE_MISMATCH',
  expired: 'TOKEN_EXPIRED',
  not_yet_valid: 'TOKEN_NOT_YET_VALID',
  bad_signature: 'TOKEN_SIGNATURE_INVALID',
  unknown_key: 'TOKEN_SIGNATURE_INVALID',
  issuer_unreachable: 'ISSUER_UNAVAILABLE',
};

/** The API refusal of a token the verifier refused. */
export function refusalOfToken(reason: TokenRefusal): IdentityRefusalCode {
  return BY_TOKEN_REFUSAL[reason];
}

/** The `WWW-Authenticate` value of a 401 for a bearer resource (RFC 6750 §3). */
export function bearerChallenge(code: IdentityRefusalCode, realm = 'gatehouse', scope?: string): string {
  if (code === 'UNAUTHORIZED') return `Bearer realm="${realm}"`;
  if (code === 'INSUFFICIENT_SCOPE') return `Bearer realm="${realm}", error="insufficient_scope", scope="${scope ?? ''}"`;
  return `Bearer realm="${realm}", error="invalid_token", error_description="${IDENTITY_REFUSALS[code].meaning.replaceAll('"', "'")}"`;
}

/** True when two secrets are equal, in time that does not depend on where they differ. */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}
