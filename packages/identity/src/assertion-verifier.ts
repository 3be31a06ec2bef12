import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import canonicalize from 'canonicalize';
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify } from 'jose';
import type { JSONWebKeySet, JWTVerifyGetKey } from 'jose';
import { ASSERTION_REFUSALS } from '@gatehouse/contracts';
import type { AssertionRefusalCode } from '@gatehouse/contracts';
import { CALL_ASSERTION_TYPE, HTTP_METHOD } from './call-assertion.js';
import type { CallAssertionClaims, CallKind } from './call-assertion.js';

/** Seconds an assertion's `exp` and `iat` may be off by, unless the verifier is told otherwise. */
export const ASSERTION_CLOCK_TOLERANCE_S = 5;

/**
 * Every refusal of a call by its system of record, with the HTTP status to answer, comes from the
 * one catalogue (`ASSERTION_REFUSALS` of @gatehouse/contracts). A 401 says the request proves
 * nothing (no assertion, or one this deployment did not mint, or no longer valid); a 403 says a
 * valid assertion does not cover this request.
 */
export { ASSERTION_REFUSALS };
export type { AssertionRefusalCode };

export type AssertionCheck =
  | { readonly ok: true; readonly claims: CallAssertionClaims }
  | { readonly ok: false; readonly code: AssertionRefusalCode; readonly status: number; readonly message: string };

/** What the request in hand is, for the verifier to hold the assertion against. */
export interface CallRequest {
  /** The `Authorization` header as received. */
  readonly authorization: string | undefined;
  /** The kind of call this route serves. */
  readonly call: CallKind;
  /** The request's method as received (`request.method`): must be the assertion's `method`. */
  readonly method: string;
  /**
   * The request target as received: its path and query (`request.url` in node:http and fastify),
   * compared byte for byte with the assertion's `target`. Behind a proxy that rewrites paths, the
   * target as the handler sent it (the prefix put back).
   */
  readonly target: string;
  /** The tenant the request names itself (an `x-tenant` header, a path segment), when it names one. */
  readonly tenant?: string | undefined;
  /** A write's `Idempotency-Key` header, or the key a status query asks about. */
  readonly idempotencyKey?: string | undefined;
  /** A write's parsed JSON body: its canonical form must hash to `arguments_sha256`. */
  readonly body?: unknown;
}

/**
 * Remembers the `jti`s presented, until their assertion is no longer accepted. Every replica of a
 * system of record must share one (`PgReplayGuard` of `@gatehouse/pg` is a table): a replay sent to
 * a replica whose memory never saw the first presentation would pass.
 */
export interface ReplayGuard {
  /**
   * True the first time `jti` is presented before `expiresAtMs` (its `exp` and the clock tolerance),
   * false on any later presentation; atomic across every verifier sharing the memory.
   */
  firstSeen(jti: string, expiresAtMs: number): boolean | Promise<boolean>;
}

/**
 * One process's memory of the assertions it has seen, forgotten as they expire: for a system of
 * record that runs as one process only. Replicas share a store instead (`PgReplayGuard`, or Redis
 * keyed by `jti`, expiring with it): one replica's memory cannot see a replay sent to another.
 */
export class MemoryReplayGuard implements ReplayGuard {
  readonly #seen = new Map<string, number>();
  #inserts = 0;

  firstSeen(jti: string, expiresAtMs: number, now: number = Date.now()): boolean {
    const until = this.#seen.get(jti);
    if (until !== undefined && until >= now) return false;
    this.#seen.set(jti, expiresAtMs);
    this.#inserts += 1;
    if (this.#inserts % 1024 === 0) {
      for (const [id, expiry] of this.#seen) if (expiry < now) this.#seen.delete(id);
    }
    return true;
  }

  get size(): number {
    return this.#seen.size;
  }
}

export interface CallAssertionVerifierOptions {
  /** The deployment's issuer, exactly as its executors set `iss`. */
  readonly issuer: string;
  /** This system of record's audience: an assertion minted for another is refused. */
  readonly audience: string;
  /**
   * The executors' public keys: the URL of their JWKS (`http://executor:9464/.well-known/jwks.json`,
   * fetched and refetched when an unknown key id appears), a file holding the set (read again when
   * an unknown key id appears and the file changed), or the set itself.
   */
  readonly keys: string | URL | JSONWebKeySet;
  /** How far the executors' clocks and ours may disagree (default 5 s). */
  readonly clockToleranceS?: number;
  /** The longest lifetime (exp − iat) accepted (default 300 s): what keeps a replay memory small. */
  readonly maxLifetimeS?: number;
  /** Where presented ids are remembered (default one process's memory: one replica only). */
  readonly replay?: ReplayGuard;
}

const ALGORITHMS = ['EdDSA', 'Ed25519', 'ES256'];
const CALLS: readonly string[] = ['read', 'write', 'status'];
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** A refusal as a system of record answers it: status, headers and `{ error: { code, message, retryable } }`. */
export interface RefusalResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: { readonly error: { readonly code: AssertionRefusalCode; readonly message: string; readonly retryable: boolean } };
}

/** The answer to a refused call: a 401 carries its Bearer challenge (RFC 6750 §3), a 503 says to retry. */
export function refusalResponse(refusal: Extract<AssertionCheck, { ok: false }>): RefusalResponse {
  const retryable = refusal.code === 'KEYS_UNAVAILABLE' || refusal.code === 'REPLAY_MEMORY_UNAVAILABLE';
  const headers: Record<string, string> = {};
  if (refusal.status === 401) {
    headers['www-authenticate'] =
      refusal.code === 'ASSERTION_MISSING'
        ? 'Bearer realm="gatehouse-call"'
        : `Bearer realm="gatehouse-call", error="invalid_token", error_description="${refusal.code}"`;
  }
  return { status: refusal.status, headers, body: { error: { code: refusal.code, message: refusal.message, retryable } } };
}

function refuse(code: AssertionRefusalCode, message: string): AssertionCheck {
  return { ok: false, code, status: ASSERTION_REFUSALS[code].status, message };
}

/** sha256 (hex) of the RFC 8785 canonical JSON of a parsed body: what `arguments_sha256` names. */
export function canonicalSha256(value: unknown): string | undefined {
  const text = canonicalize(value);
  return text === undefined ? undefined : createHash('sha256').update(text, 'utf8').digest('hex');
}

/** A key set read from a file: read again when an unknown key id appears and the file has changed. */
function fileKeys(path: string): JWTVerifyGetKey {
  let mtime = -1;
  let current: JWTVerifyGetKey | undefined;
  const load = (): void => {
    const changed = statSync(path).mtimeMs;
    if (changed === mtime && current !== undefined) return;
    current = createLocalJWKSet(JSON.parse(readFileSync(path, 'utf8')) as JSONWebKeySet);
    mtime = changed;
  };
  return async (header, token) => {
    load();
    try {
      return await current!(header, token);
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'ERR_JWKS_NO_MATCHING_KEY') throw error;
      load();
      return current!(header, token);
    }
  };
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/**
 * Where the executors' keys come from. A URL must be https, or plain http to this host (loopback):
 * anyone on the path of a plain-HTTP fetch could serve a key set of their own and mint assertions
 * this system of record accepts. Across a network, serve the JWKS over TLS or read it from a file.
 */
function keysOf(source: CallAssertionVerifierOptions['keys']): JWTVerifyGetKey {
  if (source instanceof URL || (typeof source === 'string' && /^https?:\/\//i.test(source))) {
    const url = new URL(source);
    if (url.protocol === 'http:' && !LOOPBACK.test(url.hostname))
      throw new TypeError(
        `the executors' key set ${url.origin} would be fetched over plain HTTP from another host: anyone on that path could serve keys of their own; use https, or a file holding the set (\`gatehouse keys jwks\`)`,
      );
    return createRemoteJWKSet(url, { timeoutDuration: 5_000, cooldownDuration: 30_000 });
  }
  if (typeof source === 'string') return fileKeys(source);
  return createLocalJWKSet(source);
}

const JOSE_REFUSALS: Readonly<Record<string, AssertionRefusalCode>> = {
  ERR_JWT_EXPIRED: 'ASSERTION_EXPIRED',
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED: 'ASSERTION_INVALID',
  ERR_JWKS_NO_MATCHING_KEY: 'ASSERTION_INVALID',
  ERR_JWKS_MULTIPLE_MATCHING_KEYS: 'ASSERTION_INVALID',
  ERR_JOSE_ALG_NOT_ALLOWED: 'ASSERTION_INVALID',
  ERR_JWS_INVALID: 'ASSERTION_INVALID',
  ERR_JWT_INVALID: 'ASSERTION_INVALID',
  ERR_JOSE_NOT_SUPPORTED: 'ASSERTION_INVALID',
  ERR_JWT_CLAIM_VALIDATION_FAILED: 'ASSERTION_INVALID',
};

function refusalOf(error: unknown): AssertionCheck {
  const { code, claim, message } = error as { code?: unknown; claim?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : String(error);
  if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED' && (claim === 'nbf' || claim === 'iat')) return refuse('ASSERTION_EXPIRED', text);
  const mapped = typeof code === 'string' ? JOSE_REFUSALS[code] : undefined;
  // Anything else is the key set failing to load (unreachable, not a key set): the assertion was not judged.
  return mapped === undefined ? refuse('KEYS_UNAVAILABLE', text) : refuse(mapped, text);
}

function optionalString(claims: Record<string, unknown>, name: string): boolean {
  return claims[name] === undefined || (typeof claims[name] === 'string' && claims[name] !== '');
}

/** Whether the verified payload has the shape of a call assertion (its signature is already checked). */
function shapeProblem(claims: Record<string, unknown>): string | undefined {
  for (const name of ['jti', 'tenant', 'run_id', 'command_id', 'tool']) {
    if (typeof claims[name] !== 'string' || claims[name] === '') return `the claim ${name} is missing`;
  }
  if (typeof claims['call'] !== 'string' || !CALLS.includes(claims['call'])) return 'the claim call is not read, write or status';
  // An assertion that names no request would do for any: refused, not merely unchecked.
  if (typeof claims['method'] !== 'string' || !HTTP_METHOD.test(claims['method'])) return 'the claim method names no HTTP method';
  if (typeof claims['target'] !== 'string' || !claims['target'].startsWith('/')) return 'the claim target names no path';
  const act = claims['act'];
  if (typeof act !== 'object' || act === null || typeof (act as Record<string, unknown>)['sub'] !== 'string')
    return 'the claim act names no actor';
  for (const name of ['idempotency_key', 'proposal_id', 'approval_id', 'approver']) {
    if (!optionalString(claims, name)) return `the claim ${name} is not a string`;
  }
  const hash = claims['arguments_sha256'];
  if (hash !== undefined && (typeof hash !== 'string' || !SHA256_HEX.test(hash))) return 'the claim arguments_sha256 is not a sha256';
  if (typeof claims['aud'] !== 'string') return 'the assertion names more than one audience';
  return undefined;
}

/**
 * What a system of record runs on every request before it serves it: is this a call Gatehouse
 * decided, for this service, now, for exactly this method, path and query, for this tenant, and —
 * for a write — for exactly this body under exactly this key, approved? A plain JWT check (`typ`,
 * issuer, audience, expiry, EdDSA or ES256 signature by a key of the executors' JWKS) followed by
 * the call's own claims.
 */
export class CallAssertionVerifier {
  readonly #options: CallAssertionVerifierOptions;
  readonly #keys: JWTVerifyGetKey;
  readonly #replay: ReplayGuard;

  constructor(options: CallAssertionVerifierOptions) {
    this.#options = options;
    this.#keys = keysOf(options.keys);
    this.#replay = options.replay ?? new MemoryReplayGuard();
  }

  async verify(request: CallRequest, now: number = Date.now()): Promise<AssertionCheck> {
    const header = request.authorization;
    if (header === undefined || header === '')
      return refuse('ASSERTION_MISSING', 'send the call assertion as `Authorization: Bearer <assertion>`');
    const match = /^Bearer ([A-Za-z0-9_.-]{1,8192})$/.exec(header);
    if (match === null) return refuse('ASSERTION_INVALID', 'the Authorization header is not `Bearer <JWT>`');
    let claims: CallAssertionClaims;
    try {
      const verified = await jwtVerify(match[1]!, this.#keys, {
        typ: CALL_ASSERTION_TYPE,
        issuer: this.#options.issuer,
        audience: this.#options.audience,
        algorithms: ALGORITHMS,
        clockTolerance: this.#options.clockToleranceS ?? ASSERTION_CLOCK_TOLERANCE_S,
        currentDate: new Date(now),
        requiredClaims: ['sub', 'exp', 'iat', 'jti'],
      });
      claims = verified.payload as CallAssertionClaims;
    } catch (error) {
      return refusalOf(error);
    }
    const problem = shapeProblem(claims);
    if (problem !== undefined) return refuse('ASSERTION_INVALID', problem);
    if (claims.exp - claims.iat > (this.#options.maxLifetimeS ?? 300))
      return refuse(
        'ASSERTION_INVALID',
        `the assertion lives ${claims.exp - claims.iat} s, longer than the ${this.#options.maxLifetimeS ?? 300} s accepted`,
      );
    if (claims.call !== request.call)
      return refuse('WRONG_CALL', `the assertion is for a ${claims.call}, this route serves a ${request.call}`);
    if (request.tenant !== undefined && request.tenant !== claims.tenant)
      return refuse('TENANT_MISMATCH', 'the assertion is for another tenant');
    if (claims.method !== request.method)
      return refuse('METHOD_MISMATCH', `the assertion is for a ${claims.method} request, this is a ${String(request.method)}`);
    if (claims.target !== request.target)
      return refuse('TARGET_MISMATCH', 'the assertion is for a request to another path or query; each request needs its own');
    if (request.call === 'status' && claims.idempotency_key !== request.idempotencyKey)
      return refuse('IDEMPOTENCY_KEY_MISMATCH', 'the assertion is for the status of another idempotency key');
    if (request.call === 'write') {
      if (claims.idempotency_key === undefined || claims.idempotency_key !== request.idempotencyKey)
        return refuse('IDEMPOTENCY_KEY_MISMATCH', 'the write runs under another idempotency key than its assertion names');
      if (claims.approval_id === undefined)
        return refuse('APPROVAL_MISSING', 'a write runs only with an approval; its assertion names none');
      const hash = canonicalSha256(request.body);
      if (hash === undefined || hash !== claims.arguments_sha256)
        return refuse('BODY_MISMATCH', 'the body is not the approved arguments (its canonical sha256 differs from arguments_sha256)');
    }
    // Remembered only once it covers this very request: a forgery, or a genuine assertion presented
    // on another route, never burns an id (so it cannot spend the honest request's), and a genuine
    // assertion is good for one request only. Remembered as long as it would be accepted: to `exp`
    // and the clock tolerance past it.
    const acceptedUntilMs = (claims.exp + (this.#options.clockToleranceS ?? ASSERTION_CLOCK_TOLERANCE_S)) * 1000;
    let first: boolean;
    try {
      first = await this.#replay.firstSeen(claims.jti, acceptedUntilMs);
    } catch (error) {
      return refuse('REPLAY_MEMORY_UNAVAILABLE', `the replay memory could not be asked: ${(error as Error).message}`);
    }
    if (!first) return refuse('ASSERTION_REPLAYED', `the assertion ${claims.jti} was presented before`);
    return { ok: true, claims };
  }
}
