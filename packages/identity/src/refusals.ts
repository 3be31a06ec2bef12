import { timingSafeEqual } from 'node:crypto';
import type { TokenRefusal } from './token-verifier.js';

/**
 * Every refusal of who a caller is, with its HTTP status. An API answers
 * `{ error: { code, message } }`; a 401 carries `WWW-Authenticate`.
 */
export const IDENTITY_REFUSALS = {
  UNAUTHORIZED: { status: 401, means: 'no credential: neither a bearer token nor a session' },
  TOKEN_MALFORMED: { status: 401, means: 'the bearer token is not a JWT, is unsigned, or lacks sub, exp or iat' },
  TOKEN_TYPE_INVALID: { status: 401, means: 'the bearer token is no access token (an ID token, a refresh token or another type)' },
  TOKEN_ISSUER_UNKNOWN: { status: 401, means: 'the token was issued by another issuer than the configured one' },
  TOKEN_AUDIENCE_MISMATCH: { status: 401, means: 'the token is meant for another audience' },
  TOKEN_EXPIRED: { status: 401, means: 'the token expired (beyond the clock tolerance)' },
  TOKEN_NOT_YET_VALID: { status: 401, means: 'the token is not valid yet (nbf or iat in the future)' },
  TOKEN_SIGNATURE_INVALID: { status: 401, means: 'no key the issuer publishes signed the token as it is' },
  ISSUER_UNAVAILABLE: { status: 503, means: "the issuer's keys could not be fetched; the same token may succeed on retry" },
  INSUFFICIENT_SCOPE: { status: 403, means: 'the token does not carry the scope this API needs' },
  NOT_AN_APPROVER: { status: 403, means: "the person's claims map to no approver role" },
  NO_TENANT: { status: 403, means: "the person's claims map to no tenant" },
  RUN_INACTIVE: {
    status: 401,
    means: 'the run the token acts in has expired or was stopped (a run token, or the run of a sign-in session)',
  },
  NOT_AN_AGENT_OWNER: {
    status: 403,
    means: "the person's claims match no rule of the MCP front door's agent policy: no agent may act for them",
  },
  SESSION_INVALID: { status: 401, means: 'the session cookie names no live session (forged, stale or signed out)' },
  SESSION_EXPIRED: { status: 401, means: 'the identity provider no longer vouches for the session (signed out there, or disabled)' },
  CSRF_TOKEN_INVALID: { status: 403, means: "a state-changing request on a session lacked the session's CSRF token" },
  STEP_UP_REQUIRED: {
    status: 401,
    means: 'this approval asks for a recent sign-in at the identity provider: sign in again (max_age), then decide',
  },
  SIGN_IN_FAILED: { status: 400, means: 'the sign-in could not be completed (unknown or replayed state, refused code, bad ID token)' },
  OTHER_TENANT: { status: 404, means: 'the request belongs to a tenant the person does not approve for (answered as NOT_FOUND)' },
  NOT_AN_OPERATOR: {
    status: 403,
    means:
      "no operator: the person's claims map to no operator role (POLICY_OPERATOR_ROLE), or the token is trusted code's, not a person's",
  },
} as const;

export type IdentityRefusalCode = keyof typeof IDENTITY_REFUSALS;

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
  return `Bearer realm="${realm}", error="invalid_token", error_description="${IDENTITY_REFUSALS[code].means.replaceAll('"', "'")}"`;
}

/** True when two secrets are equal, in time that does not depend on where they differ. */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}
