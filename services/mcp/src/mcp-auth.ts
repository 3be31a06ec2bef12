import { refusalOfToken } from '@gatehouse/identity';
import type { AccessTokenVerifier, IdentityRefusalCode } from '@gatehouse/identity';
import { isActive, RUN_TOKEN_PREFIX } from '@gatehouse/state';
import type { DelegationWriter, Run, RunRegistry, RunTokens, TokenSeal } from '@gatehouse/state';
import type { Logger } from '@gatehouse/telemetry';
import type { AgentPolicy } from './agent-policy.js';

/** People signing in through their MCP client: the IdP's tokens for this resource, and the agent policy. */
export interface PeopleSignIn {
  readonly verifier: AccessTokenVerifier;
  readonly policy: AgentPolicy;
  /** The scope an MCP client asks the IdP for (named in the challenge and the resource metadata). */
  readonly scope: string;
  /**
   * Token exchange: a person's token that also names the executors' client at the IdP (`clientId`)
   * in `aud` is kept for their run, so tools whose credential is `{ exchange }` can act as that
   * person (RFC 8693). It is stored only as `sealer` seals it, to the executors' public keys: what
   * Redis holds is no bearer token here nor at the IdP, and the front door cannot read it back.
   */
  readonly delegation?: { readonly clientId: string; readonly sealer: TokenSeal };
}

export type McpAuthOutcome =
  | { readonly ok: true; readonly run: Run; readonly via: 'run_token' | 'sign_in' }
  | {
      readonly ok: false;
      readonly status: 401 | 403 | 503;
      /** The refusal's code, one of Gatehouse's identity refusals. */
      readonly code: IdentityRefusalCode;
      readonly message: string;
      /** RFC 6750's error, for WWW-Authenticate. */
      readonly error?: 'invalid_token' | 'insufficient_scope';
    };

/**
 * Who a request to the front door acts for. A run token (`ghr_…`, from the control API) names its
 * run; any other bearer token must be the IdP's access token for this resource (issuer, audience,
 * expiry, signature), and the agent policy maps its person to the run of their sign-in session,
 * registered on first use with `on_behalf_of` set to them.
 */
export class McpAuth {
  constructor(
    private readonly runTokens: RunTokens,
    private readonly runs: RunRegistry,
    private readonly people: PeopleSignIn | undefined,
    private readonly logger: Logger,
    private readonly delegation?: DelegationWriter,
  ) {}

  /** The latest expiry of a person's token kept per run: a newer token is written once, not per request. */
  private readonly keptUntil = new Map<string, number>();

  get scope(): string | undefined {
    return this.people?.scope;
  }

  get issuer(): string | undefined {
    return this.people?.verifier.issuer;
  }

  async authenticate(token: string): Promise<McpAuthOutcome> {
    if (token.startsWith(RUN_TOKEN_PREFIX) || this.people === undefined) {
      const check = await this.runTokens.check(token);
      if (check.ok) return { ok: true, run: check.run, via: 'run_token' };
      if (check.reason === 'run_inactive')
        return { ok: false, status: 401, code: 'RUN_INACTIVE', message: 'the run has expired or was stopped', error: 'invalid_token' };
      return { ok: false, status: 401, code: 'TOKEN_MALFORMED', message: 'the token is not valid', error: 'invalid_token' };
    }
    const verified = await this.people.verifier.verify(token);
    if (!verified.ok) {
      const code = refusalOfToken(verified.reason);
      return code === 'ISSUER_UNAVAILABLE'
        ? { ok: false, status: 503, code, message: "the identity provider's keys could not be fetched; try again" }
        : { ok: false, status: 401, code, message: verified.detail, error: 'invalid_token' };
    }
    const agent = this.people.policy.agentOf(verified.claims, 'gatehouse-mcp');
    if (!agent.ok) return { ok: false, status: 403, code: agent.code, message: agent.message, error: 'insufficient_scope' };
    await this.keepSubjectToken(agent.run.run_id, token, verified.claims);
    const existing = await this.runs.get(agent.run.run_id);
    if (existing !== undefined) {
      const run = await this.followSession(existing, verified.claims.exp * 1000, agent.lifetimeMs);
      if (isActive(run)) return { ok: true, run, via: 'sign_in' };
      return {
        ok: false,
        status: 401,
        code: 'RUN_INACTIVE',
        message: 'the run of this sign-in has ended (expired or stopped): sign in again for a new one',
        error: 'invalid_token',
      };
    }
    if (await this.runs.create(agent.run)) {
      this.logger.info(
        {
          run_id: agent.run.run_id,
          tenant: agent.run.tenant,
          role: agent.run.role,
          tools: agent.run.capabilities.length,
          on_behalf_of: agent.run.on_behalf_of?.subject ?? null,
        },
        'run registered for a person signed in through an MCP client',
      );
      return { ok: true, run: agent.run, via: 'sign_in' };
    }
    // Another instance registered it first: the same session, the same run.
    const raced = await this.runs.get(agent.run.run_id);
    if (raced !== undefined && isActive(raced)) return { ok: true, run: raced, via: 'sign_in' };
    return {
      ok: false,
      status: 401,
      code: 'RUN_INACTIVE',
      message: 'the run of this sign-in has ended: sign in again',
      error: 'invalid_token',
    };
  }

  /**
   * A sign-in's run lives while its session gives out tokens: a token that expires later than the
   * run moves the run's expiry to its own, never past the run's lifetime from the sign-in. When the
   * session ends at the IdP (sign-out, an administrator, its own timeout), no newer token comes and
   * the run expires with the last one. A stopped run stays stopped.
   */
  private async followSession(run: Run, tokenExpiresAt: number, lifetimeMs: number): Promise<Run> {
    const until = Math.min(run.created_at + lifetimeMs, tokenExpiresAt);
    if (run.stopped_at !== null || until <= run.expires_at) return run;
    const moved = await this.runs.extend(run, until);
    if (moved === 'extended') return { ...run, expires_at: until };
    // Stopped or moved meanwhile by another instance: the record says which.
    return (await this.runs.get(run.run_id)) ?? run;
  }

  /** Keeps the person's token, sealed, for token exchange when it names the executors' client, and is newer than the one kept. */
  private async keepSubjectToken(
    runId: string,
    token: string,
    claims: { readonly aud?: string | string[]; readonly exp: number },
  ): Promise<void> {
    const clientId = this.people?.delegation?.clientId;
    if (clientId === undefined || this.delegation === undefined) return;
    const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (!audiences.includes(clientId)) return;
    const expiresAt = claims.exp * 1000;
    if ((this.keptUntil.get(runId) ?? 0) >= expiresAt) return;
    await this.delegation.saveSubjectToken(runId, token, expiresAt);
    this.keptUntil.set(runId, expiresAt);
    // The map holds live sign-ins only: an entry past its expiry is worth nothing.
    if (this.keptUntil.size > 10_000) for (const [id, until] of this.keptUntil) if (until < Date.now()) this.keptUntil.delete(id);
  }
}
