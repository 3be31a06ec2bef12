import type { Redis } from './redis-client.js';
import type { Keyspace } from './keyspace.js';
import { keepRenewing } from './lease.js';
import type { StopRenewing } from './lease.js';
import { LuaScript } from './lua-script.js';

// Gives a lease back in every scope at once (one script: it rides auto-pipelining, a pipeline does not).
// KEYS[1..n] the scopes' slot sets; ARGV[1] the lease id. Always returns 1.
const RELEASE = new LuaScript(`
for i = 1, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
return 1
`);

// Takes one slot in every scope at once, or none. Expired leases (an executor that died) are
// reclaimed on the way in.
// KEYS[1..n] the scopes' slot sets (member lease id, score expiry, ms); ARGV[1] the lease id, ARGV[2] the lease (ms),
// ARGV[2 + i] the limit of KEYS[i]. Returns 1 taken in every scope, 0 in none (some scope is full).
const ACQUIRE = new LuaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = #KEYS
for i = 1, n do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  if redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[2 + i]) then return 0 end
end
for i = 1, n do
  redis.call('ZADD', KEYS[i], now + tonumber(ARGV[2]), ARGV[1])
  redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[2]) * 4)
end
return 1
`);

// Extends the lease in every scope that still holds it; answers how many do.
// KEYS[1..n] the scopes' slot sets; ARGV[1] the lease id, ARGV[2] the lease (ms, from now).
const RENEW = new LuaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local kept = 0
for i = 1, #KEYS do
  if redis.call('ZSCORE', KEYS[i], ARGV[1]) then
    redis.call('ZADD', KEYS[i], now + tonumber(ARGV[2]), ARGV[1])
    redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[2]) * 4)
    kept = kept + 1
  end
end
return kept
`);

export interface SlotScope {
  /** e.g. `tenant:acme` or `run:run-9`. */
  readonly scope: string;
  readonly limit: number;
}

/**
 * Concurrency slots as leases in Redis sorted sets (member = lease id, score = expiry), shared by
 * every executor: taken before work, renewed while it runs, released after, reclaimed when expired.
 */
export class SlotPool {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keyspace,
  ) {}

  async tryAcquire(scopes: readonly SlotScope[], leaseId: string, leaseMs: number): Promise<boolean> {
    const keys = scopes.map((s) => this.key(s.scope));
    const limits = scopes.map((s) => String(s.limit));
    return (await ACQUIRE.run(this.redis, keys.length, ...keys, leaseId, String(leaseMs), ...limits)) === 1;
  }

  /**
   * Waits for a slot in every scope until `deadline` (epoch ms); false if it passed. Polls with a
   * short jittered backoff; other tenants are not held up because nothing here blocks a connection.
   */
  async acquire(scopes: readonly SlotScope[], leaseId: string, leaseMs: number, deadline: number): Promise<boolean> {
    for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
      if (await this.tryAcquire(scopes, leaseId, leaseMs)) return true;
      if (Date.now() + wait >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, wait / 2 + Math.random() * wait));
    }
  }

  /** A scope's slot set: hash-tagged on a cluster, where one script takes several scopes' sets. */
  private key(scope: string): string {
    return this.redis.isCluster ? this.keys.clusterSlots(scope) : this.keys.slots(scope);
  }

  /** Extends a lease; false when some scope no longer holds it (it expired and was reclaimed). */
  async renew(scopes: readonly SlotScope[], leaseId: string, leaseMs: number): Promise<boolean> {
    const keys = scopes.map((s) => this.key(s.scope));
    return ((await RENEW.run(this.redis, keys.length, ...keys, leaseId, String(leaseMs))) as number) === keys.length;
  }

  /** Renews a lease every third of its length until stopped. */
  keep(scopes: readonly SlotScope[], leaseId: string, leaseMs: number): StopRenewing {
    return keepRenewing(() => this.renew(scopes, leaseId, leaseMs), leaseMs);
  }

  /** One pipeline: on a cluster every scope's set is in one hash slot (Keyspace.clusterSlots), so a cluster takes it too. */
  async release(scopes: readonly SlotScope[], leaseId: string): Promise<void> {
    const keys = scopes.map((s) => this.key(s.scope));
    await RELEASE.run(this.redis, keys.length, ...keys, leaseId);
  }

  /** Live leases in a scope (expired ones are not counted). */
  async inUse(scope: string, now = Date.now()): Promise<number> {
    return this.redis.zcount(this.key(scope), now, '+inf');
  }
}
