import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import { discoverRelyingParty } from './relying-party.js';
import type { RelyingParty } from './relying-party.js';

/** RFC 8693's names, as the token endpoint takes them. */
const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const REFRESH_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:refresh_token';

/** A token is not handed out within this long of its expiry: it must survive the trip and the check. */
const EXPIRY_MARGIN_MS = 15_000;

/** Past this many cached tokens, the lapsed ones (of runs long over) are dropped when another is cached. */
const CACHE_SWEEP_SIZE = 10_000;

/** Which credential an exchange is for: the system of record's audience, and the scope it needs. */
export interface ExchangeTarget {
  readonly audience: string;
  readonly scope: string | null;
}

/**
 * Where the exchanger finds a run's person: their own access token (the subject token) and the
 * refresh tokens earlier exchanges left, shared by every executor (`DelegationStore` in Redis, which
 * seals each to the executors' keys and gives back only what it could open).
 */
export interface DelegationSource {
  subjectToken(runId: string): Promise<string | undefined>;
  grant(runId: string, target: ExchangeTarget): Promise<string | undefined>;
  saveGrant(runId: string, target: ExchangeTarget, refreshToken: string, ttlMs: number): Promise<void>;
  dropGrant(runId: string, target: ExchangeTarget): Promise<void>;
}

export type ExchangeOutcome =
  | {
      readonly ok: true;
      readonly token: string;
      readonly expiresAt: number;
      /** Whom the token names (its `iss` and `sub`), or null when it is not a JWT that says. */
      readonly names: { readonly issuer: string; readonly subject: string } | null;
    }
  | {
      readonly ok: false;
      /** `refused`: the IdP said no, or there is no person's token to exchange (asking again will not help); `unreachable`: it could not be asked. */
      readonly reason: 'refused' | 'unreachable';
      readonly detail: string;
    };

/** How each credential was had, for the exchanger's counter. */
export type ExchangeStep = 'cached' | 'refreshed' | 'exchanged' | 'refused' | 'unreachable';

export interface TokenExchangerOptions {
  readonly issuer: string;
  /** The executors' client at the IdP; a person's token must name it in `aud` to be exchanged by it. */
  readonly clientId: string;
  readonly clientSecret: string;
  readonly delegation: DelegationSource;
  /** How long one request to the IdP may take (default 5 s). */
  readonly timeoutMs?: number;
  readonly onStep?: (step: ExchangeStep) => void;
}

interface Cached {
  readonly token: string;
  readonly expiresAt: number;
  readonly names: { readonly issuer: string; readonly subject: string } | null;
}

/** The `iss` and `sub` a JWT access token carries, read without checking it (it came from the token endpoint itself). */
function namesOf(token: string): Cached['names'] {
  try {
    const { iss, sub } = decodeJwt(token);
    return typeof iss === 'string' && typeof sub === 'string' ? { issuer: iss, subject: sub } : null;
  } catch {
    return null;
  }
}

/**
 * OAuth 2.0 Token Exchange (RFC 8693) at the company's IdP, for systems of record that trust only
 * the IdP: the person a run acts for gets a token for the tool's audience, with the executors'
 * client as the party that asked (`azp`). The first exchange for a run and audience asks for a
 * refresh token too, bound to the person's session at the IdP, so the run keeps working after the
 * person's own token has lapsed (an approval can take longer than an access token lives) and stops
 * the moment the session is ended there. Tokens are cached per run and target until shortly
 * before they expire; concurrent asks for one share one request.
 */
export class TokenExchanger {
  private readonly cache = new Map<string, Cached>();
  private readonly pending = new Map<string, Promise<ExchangeOutcome>>();

  private constructor(
    private readonly options: TokenExchangerOptions,
    private readonly relyingParty: RelyingParty,
  ) {}

  /** Discovers the issuer's token endpoint; throws when the issuer cannot be asked. */
  static async discover(options: TokenExchangerOptions): Promise<TokenExchanger> {
    const relyingParty = await discoverRelyingParty(options.issuer, options.clientId, options.clientSecret);
    relyingParty.timeout = Math.ceil((options.timeoutMs ?? 5_000) / 1000);
    return new TokenExchanger(options, relyingParty);
  }

  get clientId(): string {
    return this.options.clientId;
  }

  /** A token naming the run's person, for `target`: cached, refreshed, or exchanged anew. */
  async tokenFor(runId: string, target: ExchangeTarget, now = Date.now()): Promise<ExchangeOutcome> {
    const key = `${runId}\u0000${target.audience}\u0000${target.scope ?? ''}`;
    const cached = this.cache.get(key);
    if (cached !== undefined && cached.expiresAt - EXPIRY_MARGIN_MS > now) {
      this.options.onStep?.('cached');
      return { ok: true, ...cached };
    }
    const inFlight = this.pending.get(key);
    if (inFlight !== undefined) return inFlight;
    const asked = this.obtain(runId, target).then((outcome) => {
      if (outcome.ok) this.remember(key, { token: outcome.token, expiresAt: outcome.expiresAt, names: outcome.names });
      else this.cache.delete(key);
      return outcome;
    });
    this.pending.set(key, asked);
    try {
      return await asked;
    } finally {
      this.pending.delete(key);
    }
  }

  private remember(key: string, token: Cached): void {
    if (this.cache.size >= CACHE_SWEEP_SIZE) {
      const now = Date.now();
      for (const [cachedKey, cached] of this.cache) if (cached.expiresAt <= now) this.cache.delete(cachedKey);
    }
    this.cache.set(key, token);
  }

  private async obtain(runId: string, target: ExchangeTarget): Promise<ExchangeOutcome> {
    const { delegation } = this.options;
    const refreshToken = await delegation.grant(runId, target);
    if (refreshToken !== undefined) {
      const refreshed = await this.ask(() =>
        oidc.refreshTokenGrant(this.relyingParty, refreshToken, target.scope === null ? {} : { scope: target.scope }),
      );
      if (refreshed.ok) {
        await this.keepGrant(runId, target, refreshed.response);
        return this.report('refreshed', refreshed.response);
      }
      if (refreshed.reason === 'unreachable') return this.fail('unreachable', refreshed.detail);
      // The session behind it ended or the grant lapsed: the person's own token may still serve.
      await delegation.dropGrant(runId, target);
    }
    const subjectToken = await delegation.subjectToken(runId);
    if (subjectToken === undefined) {
      return this.fail(
        'refused',
        'the run holds no token of its person to exchange (none was given, it has expired, or it is sealed to no key this executor holds): the person signs in again, or the orchestrator hands over a fresh one',
      );
    }
    const parameters: Record<string, string> = {
      subject_token: subjectToken,
      subject_token_type: ACCESS_TOKEN_TYPE,
      requested_token_type: REFRESH_TOKEN_TYPE,
      audience: target.audience,
    };
    if (target.scope !== null) parameters['scope'] = target.scope;
    const exchanged = await this.ask(() => oidc.genericGrantRequest(this.relyingParty, TOKEN_EXCHANGE_GRANT, parameters));
    if (!exchanged.ok) return this.fail(exchanged.reason, exchanged.detail);
    await this.keepGrant(runId, target, exchanged.response);
    return this.report('exchanged', exchanged.response);
  }

  private async keepGrant(runId: string, target: ExchangeTarget, response: oidc.TokenEndpointResponse): Promise<void> {
    const refreshToken = response.refresh_token;
    if (refreshToken === undefined) return;
    const lifetimeS = typeof response['refresh_expires_in'] === 'number' ? response['refresh_expires_in'] : response.expires_in;
    if (lifetimeS === undefined || lifetimeS <= 0) return;
    await this.options.delegation.saveGrant(runId, target, refreshToken, lifetimeS * 1000);
  }

  private async ask(
    request: () => Promise<oidc.TokenEndpointResponse>,
  ): Promise<
    | { readonly ok: true; readonly response: oidc.TokenEndpointResponse }
    | { readonly ok: false; readonly reason: 'refused' | 'unreachable'; readonly detail: string }
  > {
    try {
      return { ok: true, response: await request() };
    } catch (error) {
      if (error instanceof oidc.ResponseBodyError) {
        // An OAuth error from the token endpoint: the IdP judged the request. A 5xx is its own failure.
        const detail = `${error.error}${error.error_description === undefined ? '' : `: ${error.error_description}`}`;
        return { ok: false, reason: error.status >= 500 ? 'unreachable' : 'refused', detail };
      }
      return { ok: false, reason: 'unreachable', detail: error instanceof Error ? error.message : String(error) };
    }
  }

  private report(step: 'refreshed' | 'exchanged', response: oidc.TokenEndpointResponse): ExchangeOutcome {
    if (typeof response.access_token !== 'string' || response.access_token.length === 0)
      return this.fail('refused', 'the token endpoint answered without an access token');
    this.options.onStep?.(step);
    const lifetimeS = response.expires_in ?? 60;
    return { ok: true, token: response.access_token, expiresAt: Date.now() + lifetimeS * 1000, names: namesOf(response.access_token) };
  }

  private fail(reason: 'refused' | 'unreachable', detail: string): ExchangeOutcome {
    this.options.onStep?.(reason);
    return { ok: false, reason, detail };
  }
}
