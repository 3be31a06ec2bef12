import { createHash, randomBytes } from 'node:crypto';
import { sameSecret } from '@gatehouse/identity';
import type { Keyspace, Redis } from '@gatehouse/state';
import type { Approver } from './approvers.js';

/** What the server keeps of a signed-in approver; the browser holds only a random id. */
export interface Session {
  readonly approver: Approver;
  /** Sent back by the console on every state-changing request (x-csrf-token). */
  readonly csrf: string;
  /** For sign-out at the identity provider (id_token_hint). */
  readonly idToken: string;
  /** Asked again before a decision once the access token has lapsed: a person the IdP dropped is dropped here. */
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
  /** The sha256 of the random value the browser that started the sign-in holds in a cookie. */
  readonly browserSha256: string;
}

/** What the callback gets for a state and the sign-in cookie the browser brought back. */
type SignInTaken = { readonly ok: true; readonly pending: PendingSignIn } | { readonly ok: false; readonly reason: SignInRefusal };

/** `unknown`: no such state (never issued, expired or used); `other-browser`: not the browser that started it. */
type SignInRefusal = 'unknown' | 'other-browser';

/** How long a sign-in may take, from /login to the callback; its browser cookie lives as long. */
export const SIGN_IN_TTL_MS = 10 * 60_000;

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
const random = (): string => randomBytes(32).toString('base64url');

/**
 * Approver sessions and pending sign-ins in Redis, each under the sha256 of the secret the browser
 * holds, so reading Redis yields no usable cookie. Any instance of the service answers any session.
 */
export class SessionStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keyspace,
    /** How long a session lasts at most, however active (default 8 h). */
    private readonly ttlMs: number = 8 * 3600_000,
  ) {}

  async create(
    fields: Omit<Session, 'csrf' | 'createdAt' | 'expiresAt'>,
    now = Date.now(),
  ): Promise<{ readonly id: string; readonly session: Session }> {
    const id = random();
    const session: Session = { ...fields, csrf: random(), createdAt: now, expiresAt: now + this.ttlMs };
    await this.redis.set(this.keys.approverSession(sha256(id)), JSON.stringify(session), 'PX', this.ttlMs);
    return { id, session };
  }

  /** The live session a cookie names, or undefined (unknown, forged, expired or signed out). */
  async get(id: string, now = Date.now()): Promise<Session | undefined> {
    if (id.length !== 43) return undefined;
    const text = await this.redis.get(this.keys.approverSession(sha256(id)));
    if (text === null) return undefined;
    const session = JSON.parse(text) as Session;
    return session.expiresAt > now ? session : undefined;
  }

  /** Keeps a session's refreshed tokens and claims; its end does not move. */
  async update(id: string, session: Session, now = Date.now()): Promise<void> {
    const left = session.expiresAt - now;
    if (left <= 0) return this.delete(id);
    await this.redis.set(this.keys.approverSession(sha256(id)), JSON.stringify(session), 'PX', left, 'XX');
  }

  async delete(id: string): Promise<void> {
    await this.redis.del(this.keys.approverSession(sha256(id)));
  }

  /**
   * Starts a sign-in: `state` goes to the IdP and comes back once; `browser` goes into a cookie of
   * the browser that starts it, and only that browser can finish it (no login CSRF).
   */
  async beginSignIn(fields: Omit<PendingSignIn, 'browserSha256'>): Promise<{ readonly state: string; readonly browser: string }> {
    const state = random();
    const browser = random();
    const pending: PendingSignIn = { ...fields, browserSha256: sha256(browser) };
    await this.redis.set(this.keys.signIn(sha256(state)), JSON.stringify(pending), 'PX', SIGN_IN_TTL_MS);
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
    const pending = JSON.parse(text) as Partial<PendingSignIn>;
    // A sign-in begun before binding existed has no browserSha256: nobody can finish it.
    if (typeof pending.browserSha256 !== 'string' || !sameSecret(sha256(browser), pending.browserSha256))
      return { ok: false, reason: 'other-browser' };
    // Exactly one of concurrent callbacks of the same browser removes the key; the others find nothing.
    if ((await this.redis.del(key)) !== 1) return { ok: false, reason: 'unknown' };
    return { ok: true, pending: pending as PendingSignIn };
  }
}
