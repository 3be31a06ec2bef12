import type { FastifyInstance, FastifyReply } from 'fastify';
import { oidc } from '@gatehouse/identity';
import type { IdentityRefusalCode, RelyingParty } from '@gatehouse/identity';
import type { GatehouseMetrics, Logger } from '@gatehouse/telemetry';
import type { ApproverAuth, ApproverIdentity } from './approver-auth.js';
import { CSRF_HEADER, SECURE_SESSION_COOKIE, SESSION_COOKIE } from './approver-auth.js';
import type { SessionStore } from './sessions.js';

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

const signInQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    return: { type: 'string', maxLength: 500 },
    max_age: { type: 'integer', minimum: 0, maximum: MAX_AGE_LIMIT_S },
  },
} as const;

/** The session cookie's name and attributes: HttpOnly always, Secure (and __Host-) when the console is served over TLS. */
export function sessionCookie(publicUrl: string): { readonly name: string; readonly secure: boolean } {
  const secure = publicUrl.startsWith('https:');
  return { name: secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE, secure };
}

/** Only a path of this service: `//evil.example` or `https://…` would make sign-in an open redirect. */
function localPath(candidate: string | undefined): string {
  if (candidate === undefined || !candidate.startsWith('/') || candidate.startsWith('//') || candidate.includes('\\')) return '/';
  return candidate;
}

/**
 * Browser sign-in to the console by OpenID Connect Authorization Code with PKCE (S256), state and
 * nonce: `/login` sends the person to the IdP, `/auth/callback` takes the code once, checks the ID
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

/** `/login`: sends the person to the IdP with PKCE, state, nonce and any max_age asked for. */
function registerLogin(app: FastifyInstance, flow: SignInFlow): void {
  const { sessions, relyingParty, redirectUri } = flow;
  app.get<{ Querystring: { return?: string; max_age?: number } }>(
    '/login',
    { schema: { querystring: signInQuery } },
    async (request, reply) => {
      const codeVerifier = oidc.randomPKCECodeVerifier();
      const nonce = oidc.randomNonce();
      const maxAge = request.query.max_age ?? null;
      const state = await sessions.beginSignIn({ codeVerifier, nonce, returnTo: localPath(request.query.return), maxAge });
      const parameters: Record<string, string> = {
        redirect_uri: redirectUri(),
        scope: SCOPE,
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      };
      if (maxAge !== null) parameters['max_age'] = String(maxAge);
      return reply.redirect(oidc.buildAuthorizationUrl(relyingParty, parameters).href, 303);
    },
  );
}

/** `/auth/callback`: takes the code once, checks the ID token, maps the person and starts a session. */
function registerCallback(app: FastifyInstance, flow: SignInFlow): void {
  const { sessions, relyingParty, redirectUri, refuseSignIn, identity, logger } = flow;
  app.get<{ Querystring: Record<string, string> }>('/auth/callback', async (request, reply) => {
    const state = typeof request.query['state'] === 'string' ? request.query['state'] : '';
    const pending = await sessions.takeSignIn(state);
    if (pending === undefined) return refuseSignIn(reply, 'SIGN_IN_FAILED', 'the state is unknown, expired or was used already');
    const currentUrl = new URL(request.url, flow.publicUrl());
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(
        relyingParty,
        currentUrl,
        {
          pkceCodeVerifier: pending.codeVerifier,
          expectedState: state,
          expectedNonce: pending.nonce,
          idTokenExpected: true,
          ...(pending.maxAge === null ? {} : { maxAge: pending.maxAge }),
        },
        { redirect_uri: redirectUri() },
      );
    } catch (error) {
      const { name, message, code } = error as Error & { code?: unknown };
      return refuseSignIn(reply, 'SIGN_IN_FAILED', `${name}${typeof code === 'string' ? ` ${code}` : ''}: ${message}`.slice(0, 300));
    }
    const claims = tokens.claims();
    if (claims === undefined || tokens.id_token === undefined)
      return refuseSignIn(reply, 'SIGN_IN_FAILED', 'the identity provider sent no ID token');
    const mapped = identity.policy.approverOf(claims);
    if (!mapped.ok) return refuseSignIn(reply, mapped.code, mapped.message);
    const { approver } = mapped;
    const { id } = await sessions.create({
      approver,
      idToken: tokens.id_token,
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
      .redirect(pending.returnTo, 303);
  });
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
