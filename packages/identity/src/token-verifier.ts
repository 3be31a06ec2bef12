import { GatehouseError } from '@gatehouse/contracts';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import type { JWTHeaderParameters, JWTPayload, JWTVerifyGetKey } from 'jose';

/**
 * Why a bearer token was refused. Each is a 401 with `WWW-Authenticate: Bearer error="invalid_token"`,
 * except `issuer_unreachable`, a 503: the token may be good, and asking again can succeed.
 */
export type TokenRefusal =
  | 'malformed'
  | 'wrong_type'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'expired'
  | 'not_yet_valid'
  | 'bad_signature'
  | 'unknown_key'
  | 'issuer_unreachable';

export type TokenCheck =
  { readonly ok: true; readonly claims: VerifiedClaims } | { readonly ok: false; readonly reason: TokenRefusal; readonly detail: string };

/** The claims of a token whose issuer, audience, lifetime and signature were checked. */
export interface VerifiedClaims extends JWTPayload {
  readonly iss: string;
  readonly sub: string;
  readonly exp: number;
}

/** What an issuer says of itself at `/.well-known/openid-configuration`, as far as Gatehouse uses it. */
export interface IssuerMetadata {
  readonly issuer: string;
  readonly jwks_uri: string;
  readonly authorization_endpoint?: string;
  readonly token_endpoint?: string;
  readonly device_authorization_endpoint?: string;
  readonly end_session_endpoint?: string;
}

/** The issuer could not be asked (retryable), or answered something that is not its own metadata (not). */
export class IssuerDiscoveryError extends GatehouseError<'ISSUER_UNAVAILABLE'> {
  constructor(message: string, options: { readonly retryable?: boolean; readonly cause?: unknown } = {}) {
    super('ISSUER_UNAVAILABLE', message, options);
  }
}

// Asymmetric algorithms only: an HMAC-signed token would be checked with a secret the verifier shares.
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/**
 * Reads an issuer's discovery document and checks that it names itself exactly as configured
 * (OpenID Connect Discovery §4.3): metadata served for another issuer is refused, so a mix-up or a
 * hostile redirect cannot make its keys trusted.
 */
export async function discoverIssuer(issuer: string, options: { readonly timeoutMs?: number } = {}): Promise<IssuerMetadata> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(options.timeoutMs ?? 10_000), redirect: 'error' });
  } catch (error) {
    throw new IssuerDiscoveryError(
      `the issuer ${issuer} did not answer at ${url}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  if (response.status !== 200) throw new IssuerDiscoveryError(`the issuer ${issuer} answered HTTP ${response.status} at ${url}`);
  const body = (await response.json().catch(() => undefined)) as Partial<IssuerMetadata> | undefined;
  if (body === undefined || typeof body.issuer !== 'string' || typeof body.jwks_uri !== 'string') {
    throw new IssuerDiscoveryError(`${url} is not an issuer's metadata (no issuer or jwks_uri)`, { retryable: false });
  }
  if (body.issuer !== issuer)
    throw new IssuerDiscoveryError(`${url} names the issuer ${body.issuer}, not ${issuer} as configured`, {
      retryable: false,
    });
  return body as IssuerMetadata;
}

export interface AccessTokenVerifierOptions {
  /** The issuer's identifier, exactly as its tokens carry it in `iss`. */
  readonly issuer: string;
  /** The audience this resource server answers to: a token not meant for it (`aud`) is refused. */
  readonly audience: string;
  /** How far the issuer's clock and ours may disagree (default 30 s). */
  readonly clockToleranceS?: number;
}

const JOSE_REFUSALS: Readonly<Record<string, TokenRefusal>> = {
  ERR_JWT_EXPIRED: 'expired',
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED: 'bad_signature',
  ERR_JWKS_NO_MATCHING_KEY: 'unknown_key',
  ERR_JWKS_MULTIPLE_MATCHING_KEYS: 'unknown_key',
  ERR_JOSE_ALG_NOT_ALLOWED: 'bad_signature',
  ERR_JWS_INVALID: 'malformed',
  ERR_JWT_INVALID: 'malformed',
  ERR_JOSE_NOT_SUPPORTED: 'malformed',
  ERR_JWKS_TIMEOUT: 'issuer_unreachable',
  ERR_JWKS_INVALID: 'issuer_unreachable',
};

const CLAIM_REFUSALS: Readonly<Record<string, TokenRefusal>> = {
  iss: 'wrong_issuer',
  aud: 'wrong_audience',
  nbf: 'not_yet_valid',
  iat: 'not_yet_valid',
};

/**
 * Checks bearer tokens of one issuer for one audience: issuer, audience, expiry and signature (by
 * the issuer's published keys, fetched and refreshed by `jose` when an unknown key id appears).
 */
export class AccessTokenVerifier {
  private constructor(
    private readonly options: AccessTokenVerifierOptions,
    private readonly keys: JWTVerifyGetKey,
  ) {}

  /** Discovers the issuer's keys from its metadata; throws IssuerDiscoveryError when it cannot. */
  static async discover(options: AccessTokenVerifierOptions): Promise<AccessTokenVerifier> {
    const metadata = await discoverIssuer(options.issuer);
    return AccessTokenVerifier.withKeys(
      options,
      createRemoteJWKSet(new URL(metadata.jwks_uri), { timeoutDuration: 5_000, cooldownDuration: 30_000 }),
    );
  }

  /** A verifier over keys given here (tests, or an issuer whose keys are configured as a set). */
  static withKeys(options: AccessTokenVerifierOptions, keys: JWTVerifyGetKey): AccessTokenVerifier {
    return new AccessTokenVerifier(options, keys);
  }

  get issuer(): string {
    return this.options.issuer;
  }

  get audience(): string {
    return this.options.audience;
  }

  async verify(token: string): Promise<TokenCheck> {
    if (token.length === 0 || token.length > 16 * 1024) return refuse('malformed', 'a bearer token is 1..16384 characters');
    let unverified: JWTPayload;
    try {
      unverified = decodeJwt(token);
    } catch {
      return refuse('malformed', 'the bearer token is not a JWT');
    }
    // Named before the signature is checked, so a token of another issuer is told apart from a forgery.
    if (unverified.iss !== this.options.issuer)
      return refuse('wrong_issuer', `issued by ${String(unverified.iss)}, not ${this.options.issuer}`);
    try {
      const { payload, protectedHeader } = await jwtVerify(token, this.keys, {
        issuer: this.options.issuer,
        audience: this.options.audience,
        algorithms: ALGORITHMS,
        clockTolerance: this.options.clockToleranceS ?? 30,
        requiredClaims: ['sub', 'exp', 'iat'],
      });
      const notAccess = notAnAccessToken(protectedHeader, payload);
      if (notAccess !== undefined) return refuse('wrong_type', notAccess);
      return { ok: true, claims: payload as VerifiedClaims };
    } catch (error) {
      return refusalOf(error);
    }
  }
}

// The header types an access token may carry: RFC 9068's, or the plain JWT most issuers still use.
const ACCESS_HEADER_TYPES = new Set(['jwt', 'at+jwt', 'application/at+jwt']);
// Claims only an ID token carries (OpenID Connect Core §2, §3.1.3.6, §3.3.2.11).
const ID_TOKEN_CLAIMS = ['nonce', 'at_hash', 'c_hash', 's_hash'] as const;

/**
 * Why a token whose signature, issuer and audience hold is still no access token, or undefined when
 * it is one: an ID token whose `aud` happens to be an API's client id (as Google and Entra issue
 * them) proves a sign-in happened, not that its bearer may call the API. An RFC 9068 token says so
 * in its header (`at+jwt`); Keycloak says so in `typ` (`Bearer`; `ID` for an ID token); a token of
 * neither kind is refused when it carries a claim only ID tokens carry.
 */
function notAnAccessToken(header: JWTHeaderParameters, payload: JWTPayload): string | undefined {
  const headerType = typeof header.typ === 'string' ? header.typ.toLowerCase() : undefined;
  if (headerType !== undefined && !ACCESS_HEADER_TYPES.has(headerType)) return `a token of type ${header.typ} is not an access token`;
  const keycloakType = payload['typ'];
  if (keycloakType !== undefined) {
    return typeof keycloakType === 'string' && keycloakType.toLowerCase() === 'bearer'
      ? undefined
      : `a token of type ${JSON.stringify(keycloakType)} is not an access token`;
  }
  if (headerType === 'at+jwt' || headerType === 'application/at+jwt') return undefined;
  const idClaim = ID_TOKEN_CLAIMS.find((claim) => payload[claim] !== undefined);
  return idClaim === undefined ? undefined : `a token carrying ${idClaim} is an ID token, not an access token`;
}

function refuse(reason: TokenRefusal, detail: string): TokenCheck {
  return { ok: false, reason, detail };
}

function refusalOf(error: unknown): TokenCheck {
  const { code, claim, message } = error as { code?: unknown; claim?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : String(error);
  if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED') {
    const reason = typeof claim === 'string' ? CLAIM_REFUSALS[claim] : undefined;
    return refuse(reason ?? 'malformed', text);
  }
  const reason = typeof code === 'string' ? JOSE_REFUSALS[code] : undefined;
  // Anything else is the key set's fetch failing: the token was not judged.
  return refuse(reason ?? 'issuer_unreachable', text);
}
