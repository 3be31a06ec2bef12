import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { verifyPayload } from '@gatehouse/events';
import type { EventSigner, KeyRing } from '@gatehouse/events';
import { canonicalJson } from '@gatehouse/contracts';
import type { Keyspace, Redis } from '@gatehouse/state';
import type { Approver } from './approvers.js';

/** What the server keeps of a signed-in approver; the browser holds only a random id. */
export interface Session {
  readonly approver: Approver;
  /** Sent back by the console on every state-changing request (x-csrf-token). */
  readonly csrf: string;
  /** For sign-out at the identity provider (id_token_hint). */
  readonly idToken: string;
  /** Asked again before every decision, and before a read once the access token has lapsed: a person the IdP dropped is dropped here. */
  readonly refreshToken: string | null;
  readonly accessExpiresAt: number;
  readonly createdAt: number;
  readonly expiresAt: number;
}

/** A sign-in under way: what the callback must match (state is the key), kept for minutes. */
export interface PendingSignIn {
  readonly codeVerifier: string;
  readonly nonce: string;
  /** A path of this service to return to. */
  readonly returnTo: string;
  /** Seconds: the IdP must have authenticated the person this recently (OIDC max_age). */
  readonly maxAge: number | null;
}

/** What the callback gets for a state and the sign-in cookie the browser brought back. */
type SignInTaken = { readonly ok: true; readonly pending: PendingSignIn } | { readonly ok: false; readonly reason: SignInRefusal };

/** `unknown`: no such state (never issued, expired or used); `other-browser`: not the browser that started it. */
type SignInRefusal = 'unknown' | 'other-browser';

/** How long a sign-in may take, from /login to the callback; its browser cookie lives as long. */
export const SIGN_IN_TTL_MS = 10 * 60_000;

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
const random = (): string => randomBytes(32).toString('base64url');

const SEALED = 'v1';

/** An AES-256-GCM key that only the holder of `secret` (a browser's cookie value) can derive. */
const keyOf = (secret: string, purpose: string): Buffer =>
  Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), `gatehouse ${purpose}`, 32));

/** `value` as JSON, sealed under `secret`: `v1.<iv>.<ciphertext and tag>`, base64url. */
function seal(secret: string, purpose: string, value: unknown): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(secret, purpose), iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${SEALED}.${iv.toString('base64url')}.${sealed.toString('base64url')}`;
}

/** What `seal` sealed under `secret`, or undefined: another secret, altered, or not sealed at all. */
function open<T>(secret: string, purpose: string, text: string): T | undefined {
  const [version, iv = '', body = ''] = text.split('.');
  const sealed = Buffer.from(body, 'base64url');
  if (version !== SEALED || sealed.length < 16) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(secret, purpose), Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(sealed.subarray(sealed.length - 16));
    return JSON.parse(Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()]).toString('utf8')) as T;
  } catch {
    return undefined;
  }
}

/** A session as sealed: the session, and the approval service's signature over it and its key. */
interface SignedSession {
  readonly session: Session;
  readonly signature: Readonly<Record<string, string>>;
}

const SESSION_PREFIX = 'gatehouse.approver-session.v1\n';

/** The bytes signed for a session: what it says, bound to the key it is stored under. */
const sessionPayload = (idSha256: string, session: Session): Buffer =>
  Buffer.from(`${SESSION_PREFIX}${canonicalJson({ id_sha256: idSha256, session })}`, 'utf8');

/**
 * Approver sessions and pending sign-ins in Redis, each under the sha256 of the secret the browser
 * holds and sealed with a key derived from that secret, so reading Redis yields no usable cookie
 * and no token: a session's ID and refresh tokens, and a sign-in's PKCE verifier, open only for a
 * request that brings the browser's cookie. A session is also signed with the approval service's
 * key, so whoever can write Redis cannot make one up (roles, tenants, a person) for a cookie of
 * their own. Any instance of the service answers any session.
 */
export class SessionStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keyspace,
    /** This service's signer, and the keys it trusts (its own among them). */
    private readonly trust: { readonly signer: EventSigner; readonly keys: KeyRing },
    /** How long a session lasts at most, however active (default 8 h). */
    private readonly ttlMs: number = 8 * 3600_000,
  ) {}

  async create(
    fields: Omit<Session, 'csrf' | 'createdAt' | 'expiresAt'>,
    now = Date.now(),
  ): Promise<{ readonly id: string; readonly session: Session }> {
    const id = random();
    const session: Session = { ...fields, csrf: random(), createdAt: now, expiresAt: now + this.ttlMs };
    await this.redis.set(this.keys.approverSession(sha256(id)), this.sealed(id, session), 'PX', this.ttlMs);
    return { id, session };
  }

  /** The live session a cookie names, or undefined (unknown, forged, expired or signed out). */
  async get(id: string, now = Date.now()): Promise<Session | undefined> {
    if (id.length !== 43) return undefined;
    const text = await this.redis.get(this.keys.approverSession(sha256(id)));
    if (text === null) return undefined;
    const signed = open<SignedSession>(id, 'approver session', text);
    if (signed === undefined) return undefined;
    const check = verifyPayload(
      'an approver session',
      ['approval'],
      () => sessionPayload(sha256(id), signed.session),
      signed.signature,
      this.trust.keys,
    );
    return check.ok && signed.session.expiresAt > now ? signed.session : undefined;
  }

  /** Keeps a session's refreshed tokens and claims; its end does not move. */
  async update(id: string, session: Session, now = Date.now()): Promise<void> {
    const left = session.expiresAt - now;
    if (left <= 0) return this.delete(id);
    await this.redis.set(this.keys.approverSession(sha256(id)), this.sealed(id, session), 'PX', left, 'XX');
  }

  /** `session`, signed and sealed under the cookie `id`. */
  private sealed(id: string, session: Session): string {
    const signed: SignedSession = { session, signature: this.trust.signer.headersOver(sessionPayload(sha256(id), session)) };
    return seal(id, 'approver session', signed);
  }

  async delete(id: string): Promise<void> {
    await this.redis.del(this.keys.approverSession(sha256(id)));
  }

  /**
   * Starts a sign-in: `state` goes to the IdP and comes back once; `browser` goes into a cookie of
   * the browser that starts it, and only that browser can finish it (no login CSRF).
   */
  async beginSignIn(pending: PendingSignIn): Promise<{ readonly state: string; readonly browser: string }> {
    const state = random();
    const browser = random();
    await this.redis.set(this.keys.signIn(sha256(state)), seal(browser, 'sign-in', pending), 'PX', SIGN_IN_TTL_MS);
    return { state, browser };
  }

  /**
   * The sign-in `state` names, if `browser` is the cookie of the browser that started it; removed as
   * it is taken, so a replayed callback finds nothing.
   *
   * A browser without that cookie takes nothing and removes nothing. Whoever holds someone else's
   * callback URL (from a Referer, a log, over a shoulder) and makes any browser load it therefore
   * cannot burn that person's sign-in: their own browser still finishes it, and the code in the
   * URL is never redeemed for the wrong browser. Leaving the state costs nothing: finishing it
   * needs the 256-bit cookie value, and it lapses with SIGN_IN_TTL_MS anyway.
   */
  async takeSignIn(state: string, browser: string | undefined): Promise<SignInTaken> {
    if (browser === undefined || browser.length !== 43) return { ok: false, reason: 'other-browser' };
    if (state.length !== 43) return { ok: false, reason: 'unknown' };
    const key = this.keys.signIn(sha256(state));
    const text = await this.redis.get(key);
    if (text === null) return { ok: false, reason: 'unknown' };
    // Only the browser that started the sign-in holds the key its record opens with.
    const pending = open<PendingSignIn>(browser, 'sign-in', text);
    if (pending === undefined) return { ok: false, reason: 'other-browser' };
    // Exactly one of concurrent callbacks of the same browser removes the key; the others find nothing.
    if ((await this.redis.del(key)) !== 1) return { ok: false, reason: 'unknown' };
    return { ok: true, pending };
  }
}
