import type { FastifyInstance, FastifyReply } from 'fastify';
import { oidc } from '@gatehouse/identity';
import type { IdentityRefusalCode, RelyingParty } from '@gatehouse/identity';
import type { GatehouseMetrics, Logger } from '@gatehouse/telemetry';
import type { ApproverAuth, ApproverIdentity } from './approver-auth.js';
import { CSRF_HEADER, SECURE_SESSION_COOKIE, SESSION_COOKIE } from './approver-auth.js';
import type { PendingSignIn, SessionStore } from './sessions.js';
import { SIGN_IN_TTL_MS } from './sessions.js';

export interface SignInOptions {
  readonly identity: ApproverIdentity;
  readonly auth: ApproverAuth;
  readonly sessions: SessionStore;
  readonly logger: Logger;
  readonly metrics?: GatehouseMetrics;
  /** The console's address as browsers reach it (its redirect URI is `<url>/auth/callback`). */
  readonly publicUrl: () => string;
}

const SCOPE = 'openid profile email';
const MAX_AGE_LIMIT_S = 7 * 24 * 3600;
/** The longest return path /login takes. */
const RETURN_MAX = 500;

const signInQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    return: { type: 'string', maxLength: RETURN_MAX },
    max_age: { type: 'integer', minimum: 0, maximum: MAX_AGE_LIMIT_S },
  },
} as const;

/** The cookie that ties a sign-in to the browser that started it, holding a random value whose sha256 the sign-in keeps. */
const SIGN_IN_COOKIE = 'gatehouse_sign_in';
const SECURE_SIGN_IN_COOKIE = '__Host-gatehouse_sign_in';

interface CookieName {
  readonly name: string;
  readonly secure: boolean;
}

/** The session cookie's name and attributes: HttpOnly always, Secure (and __Host-) when the console is served over TLS. */
export function sessionCookie(publicUrl: string): CookieName {
  const secure = publicUrl.startsWith('https:');
  return { name: secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE, secure };
}

/** The sign-in cookie's name and attributes, chosen as the session cookie's are. */
function signInCookie(publicUrl: string): CookieName {
  const secure = publicUrl.startsWith('https:');
  return { name: secure ? SECURE_SIGN_IN_COOKIE : SIGN_IN_COOKIE, secure };
}

/** A control character (C0 or DEL) or a backslash: browsers drop or rewrite them, so what they follow is not what was checked. */
const UNSAFE_IN_RETURN = /[\u0000-\u001f\u007f\\]/;

/**
 * Where a sign-in sends the browser back to: a place on the console's own origin, else `/`.
 * `candidate` is resolved by the WHATWG URL parser (the browsers' own) against the console's
 * origin; only a same-origin result passes, and what is kept is its path, query and fragment.
 * Raw control characters and backslashes are refused outright: `/\t/evil.example` is `//evil…` to a
 * browser. Exported for its tests.
 */
export function returnPath(candidate: string | undefined, consoleUrl: string): string {
  if (candidate === undefined || candidate.length > RETURN_MAX || UNSAFE_IN_RETURN.test(candidate)) return '/';
  const origin = new URL(consoleUrl).origin;
  const base = `${origin}/`;
  let resolved: URL;
  try {
    resolved = new URL(candidate, base);
  } catch {
    return '/';
  }
  if (resolved.origin !== origin) return '/';
  const kept = `${resolved.pathname}${resolved.search}${resolved.hash}`;
  // `/.//evil.example` resolves here to the path `//evil.example`, which a browser reads as another
  // host: what goes out in Location is checked again the way the browser will read it.
  return new URL(kept, base).origin === origin ? kept : '/';
}

/**
 * Browser sign-in to the console by OpenID Connect Authorization Code with PKCE (S256), state and
 * nonce: `/login` sends the person to the IdP and gives their browser a sign-in cookie;
 * `/auth/callback`, in that browser only (no login CSRF), takes the code once, checks the ID
 * token (signature, issuer, audience, expiry, nonce, and auth_time against a requested max_age),
 * maps the person's claims through the approver policy and starts a server-side session;
 * `/logout` ends it here and at the IdP.
 */
export function registerSignIn(app: FastifyInstance, options: SignInOptions): void {
  const console = options.identity.console;
  if (console === undefined) return;
  const { relyingParty } = console;
  // The ID token from the token endpoint is checked by the IdP's keys too, not only trusted for
  // having come back over the back channel.
  oidc.enableNonRepudiationChecks(relyingParty);
  const flow: SignInFlow = {
    ...options,
    relyingParty,
    redirectUri: () => `${options.publicUrl().replace(/\/+$/, '')}/auth/callback`,
    refuseSignIn: (reply, code, detail) => {
      options.metrics?.identityRefused('approval', code);
      options.logger.info({ code, detail }, 'sign-in refused');
      return reply.redirect(`/#sign-in-error=${code}`, 303);
    },
  };
  registerLogin(app, flow);
  registerCallback(app, flow);
  registerLogout(app, flow);
}

/** What each route of the sign-in flow shares. */
interface SignInFlow extends SignInOptions {
  readonly relyingParty: RelyingParty;
  readonly redirectUri: () => string;
  readonly refuseSignIn: (reply: FastifyReply, code: IdentityRefusalCode, detail: string) => FastifyReply;
}

/** `/login`: sends the person to the IdP with PKCE, state, nonce and any max_age asked for, and marks this browser as the one signing in. */
function registerLogin(app: FastifyInstance, flow: SignInFlow): void {
  const { sessions, relyingParty, redirectUri } = flow;
  app.get<{ Querystring: { return?: string; max_age?: number } }>(
    '/login',
    { schema: { querystring: signInQuery } },
    async (request, reply) => {
      const codeVerifier = oidc.randomPKCECodeVerifier();
      const nonce = oidc.randomNonce();
      const maxAge = request.query.max_age ?? null;
      const returnTo = returnPath(request.query.return, flow.publicUrl());
      const { state, browser } = await sessions.beginSignIn({ codeVerifier, nonce, returnTo, maxAge });
      const parameters: Record<string, string> = {
        redirect_uri: redirectUri(),
        scope: SCOPE,
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      };
      if (maxAge !== null) parameters['max_age'] = String(maxAge);
      // Lax: the IdP's redirect back is a top-level GET, which carries it. One sign-in per browser
      // at a time: a second /login replaces the cookie, and the first one's callback is refused.
      const cookie = signInCookie(flow.publicUrl());
      return reply
        .setCookie(cookie.name, browser, {
          httpOnly: true,
          secure: cookie.secure,
          sameSite: 'lax',
          path: '/',
          maxAge: SIGN_IN_TTL_MS / 1000,
        })
        .redirect(oidc.buildAuthorizationUrl(relyingParty, parameters).href, 303);
    },
  );
}

/**
 * `/auth/callback`: in the browser that started the sign-in only, takes the code once, checks the
 * ID token, maps the person and starts a session.
 */
function registerCallback(app: FastifyInstance, flow: SignInFlow): void {
  const { sessions, refuseSignIn, identity, logger } = flow;
  app.get<{ Querystring: Record<string, string> }>('/auth/callback', async (request, reply) => {
    const state = typeof request.query['state'] === 'string' ? request.query['state'] : '';
    const binding = signInCookie(flow.publicUrl());
    const browser = request.cookies[binding.name];
    // Refused before anything is redeemed or spent, and the browser's cookies are left as they
    // were: a victim made to load an attacker's callback URL keeps their session (login CSRF).
    const taken = await sessions.takeSignIn(state, browser);
    if (!taken.ok)
      return refuseSignIn(
        reply,
        'SIGN_IN_FAILED',
        taken.reason === 'unknown'
          ? 'the state is unknown, expired or was used already'
          : `this browser did not start this sign-in (${browser === undefined ? 'it has no sign-in cookie' : 'its sign-in cookie is another'})`,
      );
    // The sign-in is spent: its cookie goes, whatever comes of it.
    reply.clearCookie(binding.name, { httpOnly: true, secure: binding.secure, sameSite: 'lax', path: '/' });
    const redeemed = await redeem(flow, new URL(request.url, flow.publicUrl()), state, taken.pending);
    if (!redeemed.ok) return refuseSignIn(reply, redeemed.code, redeemed.detail);
    const mapped = identity.policy.approverOf(redeemed.claims);
    if (!mapped.ok) return refuseSignIn(reply, mapped.code, mapped.message);
    const { approver } = mapped;
    const { tokens } = redeemed;
    const { id } = await sessions.create({
      approver,
      idToken: redeemed.idToken,
      refreshToken: tokens.refresh_token ?? null,
      accessExpiresAt: Date.now() + (tokens.expires_in ?? 60) * 1000,
    });
    const cookie = sessionCookie(flow.publicUrl());
    // Signing in again (a step-up) replaces the session the browser had.
    const previous = request.cookies[cookie.name];
    if (previous !== undefined) await sessions.delete(previous);
    logger.info(
      { approver: approver.identity, issuer: approver.issuer, subject: approver.subject, roles: approver.roles },
      'approver signed in',
    );
    return reply
      .setCookie(cookie.name, id, { httpOnly: true, secure: cookie.secure, sameSite: 'lax', path: '/' })
      .redirect(taken.pending.returnTo, 303);
  });
}

type Tokens = Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;

type Redeemed =
  | {
      readonly ok: true;
      readonly tokens: Tokens;
      readonly idToken: string;
      readonly claims: NonNullable<ReturnType<Tokens['claims']>>;
    }
  | { readonly ok: false; readonly code: IdentityRefusalCode; readonly detail: string };

/** Redeems the callback's code at the IdP and checks the ID token (signature, issuer, audience, expiry, nonce, auth_time). */
async function redeem(flow: SignInFlow, currentUrl: URL, state: string, pending: PendingSignIn): Promise<Redeemed> {
  let tokens: Tokens;
  try {
    tokens = await oidc.authorizationCodeGrant(
      flow.relyingParty,
      currentUrl,
      {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
        ...(pending.maxAge === null ? {} : { maxAge: pending.maxAge }),
      },
      { redirect_uri: flow.redirectUri() },
    );
  } catch (error) {
    const { name, message, code } = error as Error & { code?: unknown };
    return { ok: false, code: 'SIGN_IN_FAILED', detail: `${name}${typeof code === 'string' ? ` ${code}` : ''}: ${message}`.slice(0, 300) };
  }
  const claims = tokens.claims();
  if (claims === undefined || tokens.id_token === undefined)
    return { ok: false, code: 'SIGN_IN_FAILED', detail: 'the identity provider sent no ID token' };
  return { ok: true, tokens, idToken: tokens.id_token, claims };
}

/** `/logout`: ends the session here and gives the IdP's end-session address. */
function registerLogout(app: FastifyInstance, flow: SignInFlow): void {
  const { sessions, relyingParty, logger } = flow;
  app.post('/logout', async (request, reply) => {
    const cookie = sessionCookie(flow.publicUrl());
    const sessionId = request.cookies[cookie.name];
    const csrfHeader = request.headers[CSRF_HEADER];
    const signedIn = await flow.auth.authenticate({
      authorization: undefined,
      sessionId,
      csrf: typeof csrfHeader === 'string' ? csrfHeader : undefined,
      changes: true,
      vouch: 'never',
    });
    if (!signedIn.ok || signedIn.session === undefined) {
      if (!signedIn.ok) flow.metrics?.identityRefused('approval', signedIn.code);
      const code = signedIn.ok ? 'UNAUTHORIZED' : signedIn.code;
      return reply
        .code(code === 'CSRF_TOKEN_INVALID' ? 403 : 401)
        .send({ error: { code, message: signedIn.ok ? 'not signed in with a session' : signedIn.message } });
    }
    await sessions.delete(signedIn.session.id);
    logger.info({ approver: signedIn.approver.identity }, 'approver signed out');
    const endSession = oidc.buildEndSessionUrl(relyingParty, {
      id_token_hint: signedIn.session.value.idToken,
      post_logout_redirect_uri: `${flow.publicUrl().replace(/\/+$/, '')}/`,
    });
    return reply.clearCookie(cookie.name, { path: '/' }).send({ signed_out: true, end_session_url: endSession.href });
  });
}
