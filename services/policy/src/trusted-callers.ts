import { bearerChallenge, IDENTITY_REFUSALS, refusalOfToken, sameSecret } from '@gatehouse/identity';
import type { AccessTokenVerifier, IdentityRefusalCode, VerifiedClaims } from '@gatehouse/identity';
import type { Registrar } from '@gatehouse/state';

/** Trusted code proved by the identity provider: a client-credentials token for this API, with its scope. */
export interface TrustedCallerIdentity {
  /** Checks tokens for the control API's audience (POLICY_OIDC_AUDIENCE). */
  readonly accessTokens: AccessTokenVerifier;
  /** The scope a token must carry to register and manage runs (POLICY_RUNS_SCOPE). */
  readonly scope: string;
}

/** A caller the control API refuses: the identity refusal, its HTTP status and, for 401 and scope, the challenge. */
export interface CallerRefused {
  readonly ok: false;
  readonly code: IdentityRefusalCode;
  readonly status: number;
  readonly message: string;
  readonly challenge: string | undefined;
}

export type TrustedCaller = { readonly ok: true; readonly registrar: Registrar } | CallerRefused;

/** A refusal in `realm` (the `WWW-Authenticate` realm); `scope` names the scope an INSUFFICIENT_SCOPE lacks. */
export function callerRefused(
  code: IdentityRefusalCode,
  realm: string,
  message: string = IDENTITY_REFUSALS[code].meaning,
  scope?: string,
): CallerRefused {
  const { status } = IDENTITY_REFUSALS[code];
  return {
    ok: false,
    code,
    status,
    message,
    challenge: status === 401 || code === 'INSUFFICIENT_SCOPE' ? bearerChallenge(code, realm, scope) : undefined,
  };
}

/** The scopes a token carries: `scope` (RFC 9068, Keycloak, Okta), `scp` (Entra ID, delegated) or `roles` (Entra ID app roles, client credentials). */
export function scopesOf(claims: VerifiedClaims): readonly string[] {
  return [
    ...(typeof claims['scope'] === 'string' ? claims['scope'].split(' ') : []),
    ...(typeof claims['scp'] === 'string' ? claims['scp'].split(' ') : []),
    ...(Array.isArray(claims['roles']) ? claims['roles'].filter((r): r is string => typeof r === 'string') : []),
  ];
}

/** The registrar a request with the local-development control token is recorded under. */
export const CONTROL_TOKEN_CLIENT = 'control-token';

function refused(code: IdentityRefusalCode, message?: string, scope?: string): TrustedCaller {
  return callerRefused(code, 'gatehouse', message, scope);
}

/**
 * Who is calling the control API: a client of the identity provider (OAuth client credentials,
 * with the runs scope), recorded as the run's registrar; or, where a deployment still sets one for
 * local development, the static control token.
 */
export class TrustedCallers {
  constructor(
    private readonly identity: TrustedCallerIdentity | undefined,
    private readonly controlToken: string | undefined,
  ) {
    if (identity === undefined && controlToken === undefined) {
      throw new Error(
        'the control API needs an identity provider (GATEHOUSE_OIDC_ISSUER) or, for local development, GATEHOUSE_CONTROL_TOKEN',
      );
    }
  }

  async authenticate(authorization: string | undefined): Promise<TrustedCaller> {
    if (authorization === undefined || !authorization.startsWith('Bearer '))
      return refused('UNAUTHORIZED', 'a bearer token of trusted code is required');
    const token = authorization.slice(7).trim();
    if (this.controlToken !== undefined && sameSecret(token, this.controlToken))
      return { ok: true, registrar: { issuer: null, subject: null, client_id: CONTROL_TOKEN_CLIENT } };
    if (this.identity === undefined) return refused('UNAUTHORIZED', 'the bearer token is not the control token');
    const check = await this.identity.accessTokens.verify(token);
    if (!check.ok) return refused(refusalOfToken(check.reason), check.detail);
    const { claims } = check;
    if (!scopesOf(claims).includes(this.identity.scope))
      return refused('INSUFFICIENT_SCOPE', `the token lacks the scope ${this.identity.scope}`, this.identity.scope);
    const client =
      typeof claims['azp'] === 'string' ? claims['azp'] : typeof claims['client_id'] === 'string' ? claims['client_id'] : claims.sub;
    return { ok: true, registrar: { issuer: claims.iss, subject: claims.sub, client_id: client } };
  }
}
