import { createHash } from 'node:crypto';
import type { Keyspace } from './keyspace.js';
import type { Redis } from './redis-client.js';

/** Which exchanged credential: the system of record's audience and the scope asked for. */
export interface GrantTarget {
  readonly audience: string;
  readonly scope: string | null;
}

/** What a stored token is sealed for: its run, and what it is to that run. Opening checks both. */
export interface SealContext {
  readonly runId: string;
  readonly use: string;
}

/**
 * Seals a person's token so that only the executors can open it: a JWE to their public keys
 * (@gatehouse/identity's `TokenSealer`). What the MCP front door and the control API hold.
 */
export interface TokenSeal {
  seal(token: string, context: SealContext): Promise<string>;
}

/** Seals as the writers do, and opens with an executor's private keys (@gatehouse/identity's `TokenUnsealer`). */
export interface TokenOpen extends TokenSeal {
  open(
    sealed: string,
    context: SealContext,
  ): Promise<{ readonly ok: true; readonly token: string } | { readonly ok: false; readonly reason: string }>;
}

/** The use a person's own access token is sealed for. */
const SUBJECT_TOKEN_USE = 'subject_token';

/**
 * Where whoever speaks for a run's person hands over their access token: the orchestrator at
 * registration, the MCP front door at each signed-in request. The token is sealed before it is
 * stored (to the executors' public keys), so what Redis holds works neither at the IdP nor at the
 * MCP front door; these writers cannot read it back.
 */
export class DelegationWriter {
  constructor(
    protected readonly redis: Redis,
    protected readonly keys: Keyspace,
    protected readonly sealer: TokenSeal,
  ) {}

  /** Keeps the person's token, sealed, until it expires (it replaces an older one). */
  async saveSubjectToken(runId: string, token: string, expiresAt: number, now = Date.now()): Promise<void> {
    const ttl = expiresAt - now;
    if (ttl <= 0) return;
    const sealed = await this.sealer.seal(token, { runId, use: SUBJECT_TOKEN_USE });
    await this.redis.set(this.keys.subjectToken(runId), sealed, 'PX', ttl);
  }
}

/**
 * What lets an executor act as a run's person at the company's IdP (RFC 8693 token exchange): the
 * person's own access token, and the refresh tokens that exchanges for each audience left behind,
 * each sealed to the executors' keys and expiring with what it holds. A sealed token this executor
 * cannot open (sealed to a key it no longer holds, changed, or moved from another run or use) is
 * treated as absent, and `onUnopened` is told why.
 */
export class DelegationStore extends DelegationWriter {
  constructor(
    redis: Redis,
    keys: Keyspace,
    private readonly opener: TokenOpen,
    private readonly onUnopened: (context: SealContext, reason: string) => void = () => undefined,
  ) {
    super(redis, keys, opener);
  }

  async subjectToken(runId: string): Promise<string | undefined> {
    return this.opened(await this.redis.get(this.keys.subjectToken(runId)), { runId, use: SUBJECT_TOKEN_USE });
  }

  async grant(runId: string, target: GrantTarget): Promise<string | undefined> {
    const hash = grantHash(target);
    return this.opened(await this.redis.get(this.keys.exchangeGrant(runId, hash)), { runId, use: grantUse(hash) });
  }

  async saveGrant(runId: string, target: GrantTarget, refreshToken: string, ttlMs: number): Promise<void> {
    if (ttlMs <= 0) return;
    const hash = grantHash(target);
    const sealed = await this.opener.seal(refreshToken, { runId, use: grantUse(hash) });
    await this.redis.set(this.keys.exchangeGrant(runId, hash), sealed, 'PX', ttlMs);
  }

  async dropGrant(runId: string, target: GrantTarget): Promise<void> {
    await this.redis.del(this.keys.exchangeGrant(runId, grantHash(target)));
  }

  private async opened(sealed: string | null, context: SealContext): Promise<string | undefined> {
    if (sealed === null) return undefined;
    const outcome = await this.opener.open(sealed, context);
    if (outcome.ok) return outcome.token;
    this.onUnopened(context, outcome.reason);
    return undefined;
  }
}

/** A refresh token is sealed for its target too: one moved to another target's key does not open. */
function grantUse(hash: string): string {
  return `refresh_token:${hash}`;
}

function grantHash(target: GrantTarget): string {
  return createHash('sha256')
    .update(`${target.audience}\u0000${target.scope ?? ''}`, 'utf8')
    .digest('hex')
    .slice(0, 32);
}
