import { createHash } from 'node:crypto';
import type { Keyspace } from './keyspace.js';
import type { Redis } from './redis-client.js';

/** Which exchanged credential: the system of record's audience and the scope asked for. */
export interface GrantTarget {
  readonly audience: string;
  readonly scope: string | null;
}

/**
 * What lets an executor act as a run's person at the company's IdP (RFC 8693 token exchange): the
 * person's own access token, handed over by whoever speaks for them (the orchestrator at
 * registration, the MCP front door at each signed-in request), and the refresh tokens that
 * exchanges for each audience left behind. Both expire with what they hold. A refresh token is
 * bound to the executors' client at the IdP: it is worth nothing without that client's credential.
 */
export class DelegationStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keyspace,
  ) {}

  /** Keeps the person's token until it expires (it replaces an older one). */
  async saveSubjectToken(runId: string, token: string, expiresAt: number, now = Date.now()): Promise<void> {
    const ttl = expiresAt - now;
    if (ttl <= 0) return;
    await this.redis.set(this.keys.subjectToken(runId), token, 'PX', ttl);
  }

  async subjectToken(runId: string): Promise<string | undefined> {
    return (await this.redis.get(this.keys.subjectToken(runId))) ?? undefined;
  }

  async grant(runId: string, target: GrantTarget): Promise<string | undefined> {
    return (await this.redis.get(this.keys.exchangeGrant(runId, grantHash(target)))) ?? undefined;
  }

  async saveGrant(runId: string, target: GrantTarget, refreshToken: string, ttlMs: number): Promise<void> {
    if (ttlMs <= 0) return;
    await this.redis.set(this.keys.exchangeGrant(runId, grantHash(target)), refreshToken, 'PX', ttlMs);
  }

  async dropGrant(runId: string, target: GrantTarget): Promise<void> {
    await this.redis.del(this.keys.exchangeGrant(runId, grantHash(target)));
  }
}

function grantHash(target: GrantTarget): string {
  return createHash('sha256')
    .update(`${target.audience}\u0000${target.scope ?? ''}`, 'utf8')
    .digest('hex')
    .slice(0, 32);
}
