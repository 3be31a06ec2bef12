import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from './redis-client.js';
import type { Keyspace } from './keyspace.js';
import { isActive } from './run-registry.js';
import type { Run, RunRegistry } from './run-registry.js';

/** The prefix of every run token, so a leaked one is recognisable in logs and secret scanners. */
export const RUN_TOKEN_PREFIX = 'ghr_';

/** What checking a bearer token found: the run it speaks for, or why it speaks for none. */
export type TokenCheck =
  { readonly ok: true; readonly run: Run } | { readonly ok: false; readonly reason: 'malformed' | 'unknown' | 'run_inactive' };

export function tokenSha256(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * Bearer tokens that let an MCP client act as one run. A token is 32 random bytes; only its sha256
 * is stored, keyed by that hash, and it expires with the run. Stopping the run revokes it: every
 * check reads the run and refuses one that is stopped or expired, so no second record needs undoing.
 */
export class RunTokens {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keyspace,
    private readonly runs: RunRegistry,
  ) {}

  /** Issues a token for an active run. The caller shows it once; it cannot be read back. */
  async issue(run: Run, now = Date.now()): Promise<{ token: string; expires_at: number }> {
    const token = `${RUN_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const ttl = Math.max(1, run.expires_at - now);
    await this.redis.set(this.keys.runToken(tokenSha256(token)), run.run_id, 'PX', ttl);
    return { token, expires_at: run.expires_at };
  }

  /** The run a token speaks for, if the token is known and its run still active. */
  async check(token: string, now = Date.now()): Promise<TokenCheck> {
    if (!token.startsWith(RUN_TOKEN_PREFIX) || token.length > 128) return { ok: false, reason: 'malformed' };
    const runId = await this.redis.get(this.keys.runToken(tokenSha256(token)));
    if (runId === null) return { ok: false, reason: 'unknown' };
    const run = await this.runs.get(runId);
    if (run === undefined || !isActive(run, now)) return { ok: false, reason: 'run_inactive' };
    return { ok: true, run };
  }
}
