import { bearerChallenge, IDENTITY_REFUSALS, refusalOfToken, sameSecret } from '@gatehouse/identity';
import type { AccessTokenVerifier, IdentityRefusalCode, RelyingParty } from '@gatehouse/identity';
import { oidc } from '@gatehouse/identity';
import type { Logger } from '@gatehouse/telemetry';
import type { ApproverPolicy } from './approver-policy.js';
import type { Approver, Approvers } from './approvers.js';
import type { Session, SessionStore } from './sessions.js';

/** How the approval service knows people: the company's identity provider, and the demo token file behind its switch. */
export interface ApproverIdentity {
  /** Checks bearer access tokens (the CLI's, a script's) for the approval API's audience. */
  readonly accessTokens: AccessTokenVerifier;
  readonly policy: ApproverPolicy;
  /** The console's OpenID Connect client, for browser sign-in; absent, only bearer tokens are taken. */
  readonly console?: { readonly relyingParty: RelyingParty; readonly clientId: string };
}

export type Authenticated =
  | { readonly ok: true; readonly approver: Approver; readonly session?: { readonly id: string; readonly value: Session } }
  | { readonly ok: false; readonly code: IdentityRefusalCode; readonly message: string; readonly challenge?: string };

/** When a session's person is checked with the IdP again; see ApproverAuth.authenticate. */
type Vouch = 'now' | 'lapsed' | 'never';

export const SESSION_COOKIE = 'gatehouse_session';
/** The cookie name under TLS: the __Host- prefix makes browsers refuse it without Secure, a Path of / or with a Domain. */
export const SECURE_SESSION_COOKIE = '__Host-gatehouse_session';
export const CSRF_HEADER = 'x-csrf-token';

const refused = (code: IdentityRefusalCode, message: string = IDENTITY_REFUSALS[code].meaning): Authenticated => ({
  ok: false,
  code,
  message,
  ...(IDENTITY_REFUSALS[code].status === 401 ? { challenge: bearerChallenge(code) } : {}),
});

/**
 * Who sent an approval API request: a bearer token (an IdP access token, or a demo token when the
 * demo switch loaded them), else the session cookie of a console sign-in. A state-changing request
 * on a session must carry the session's CSRF token; one with a bearer token needs none (no
 * browser sends it unasked).
 */
export class ApproverAuth {
  constructor(
    private readonly sessions: SessionStore,
    private readonly logger: Logger,
    private readonly identity: ApproverIdentity | undefined,
    private readonly tokens: Approvers | undefined,
  ) {}

  get signsIn(): boolean {
    return this.identity?.console !== undefined;
  }

  get demoTokens(): boolean {
    return this.tokens !== undefined;
  }

  async authenticate(request: {
    readonly authorization: string | undefined;
    readonly sessionId: string | undefined;
    readonly csrf: string | undefined;
    readonly changes: boolean;
    /**
     * When to ask the IdP whether it still vouches for a session's person: `now` (the default for
     * a state-changing request: every decision), `lapsed` (the default for a read: once the access
     * token has lapsed), `never` (signing out needs no vouching).
     */
    readonly vouch?: Vouch;
  }): Promise<Authenticated> {
    const { authorization } = request;
    if (authorization !== undefined) {
      if (!authorization.startsWith('Bearer ')) return refused('UNAUTHORIZED', 'the Authorization header must be a Bearer token');
      return this.bearer(authorization.slice(7).trim());
    }
    if (request.sessionId === undefined) return refused('UNAUTHORIZED', 'sign in, or send an approver bearer token');
    const session = await this.sessions.get(request.sessionId);
    if (session === undefined) return refused('SESSION_INVALID');
    if (request.changes && (request.csrf === undefined || !sameSecret(request.csrf, session.csrf))) return refused('CSRF_TOKEN_INVALID');
    return this.stillVouched(request.sessionId, session, request.vouch ?? (request.changes ? 'now' : 'lapsed'));
  }

  private async bearer(token: string): Promise<Authenticated> {
    const byFile = this.tokens?.authenticate(token);
    if (byFile !== undefined) return { ok: true, approver: byFile };
    if (this.identity === undefined) return refused('UNAUTHORIZED', 'the bearer token is not an approver token');
    const check = await this.identity.accessTokens.verify(token);
    if (!check.ok) return refused(refusalOfToken(check.reason), check.detail);
    const mapped = this.identity.policy.approverOf(check.claims);
    return mapped.ok ? { ok: true, approver: mapped.approver } : refused(mapped.code, mapped.message);
  }

  /**
   * The IdP is asked again (refresh grant) before every decision, and before a read once the
   * session's access token has lapsed. A person it signed out, disabled or moved out of every
   * approver group loses the session at their next decision, and for reads within one access-token
   * lifetime, rather than at the session's end. A session the IdP gave no refresh token decides
   * until its access token lapses, then must sign in again.
   */
  private async stillVouched(id: string, session: Session, vouch: Vouch): Promise<Authenticated> {
    const console = this.identity?.console;
    const lapsed = Date.now() >= session.accessExpiresAt;
    if (console === undefined || vouch === 'never' || (!lapsed && (vouch === 'lapsed' || session.refreshToken === null)))
      return { ok: true, approver: session.approver, session: { id, value: session } };
    if (session.refreshToken === null) {
      await this.sessions.delete(id);
      return refused('SESSION_EXPIRED', 'the session has no way to ask the identity provider again: sign in again');
    }
    let refreshed: Awaited<ReturnType<typeof oidc.refreshTokenGrant>>;
    try {
      refreshed = await oidc.refreshTokenGrant(console.relyingParty, session.refreshToken);
    } catch (error) {
      this.logger.info(
        { approver: session.approver.identity, err: { name: (error as Error).name } },
        'the identity provider no longer vouches for a session; it is ended',
      );
      await this.sessions.delete(id);
      return refused('SESSION_EXPIRED');
    }
    const claims = refreshed.claims();
    let approver = session.approver;
    if (claims !== undefined) {
      const mapped = this.identity?.policy.approverOf({
        ...claims,
        auth_time: claims.auth_time ?? (session.approver.authTime ?? 0) / 1000,
      });
      if (mapped !== undefined && !mapped.ok) {
        await this.sessions.delete(id);
        return refused(mapped.code, mapped.message);
      }
      if (mapped !== undefined) approver = mapped.approver;
    }
    const next: Session = {
      ...session,
      approver,
      idToken: refreshed.id_token ?? session.idToken,
      refreshToken: refreshed.refresh_token ?? session.refreshToken,
      accessExpiresAt: Date.now() + (refreshed.expires_in ?? 60) * 1000,
    };
    await this.sessions.update(id, next);
    return { ok: true, approver, session: { id, value: next } };
  }
}
