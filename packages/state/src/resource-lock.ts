import type { Redis } from './redis-client.js';
import type { Keyspace } from './keyspace.js';
import { keepRenewing } from './lease.js';
import type { StopRenewing } from './lease.js';
import { LuaScript } from './lua-script.js';

// Scripts, not a plain SET NX, so they ride the batch of script calls made in the same turn.
// KEYS[1] the lock; ARGV[1] the holder's token, ARGV[2] the lease (ms). Returns 'OK' when taken, nil when held.
const LOCK = new LuaScript(`return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX')`);
// KEYS[1] the lock; ARGV[1] the holder's token. Returns 1 when deleted, 0 when the token does not hold it.
const RELEASE = new LuaScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`);
// KEYS[1] the lock; ARGV[1] the holder's token, ARGV[2] the lease (ms, from now). Returns 1 renewed, 0 when the token
// does not hold it.
const RENEW = new LuaScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`);

/** Serializes writes to one resource (e.g. `customer:C-1842`) across executors, with an expiring token. */
export class ResourceLock {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keyspace,
  ) {}

  async tryLock(resource: string, token: string, leaseMs: number): Promise<boolean> {
    return (await LOCK.run(this.redis, 1, this.keys.lock(resource), token, String(leaseMs))) === 'OK';
  }

  /** Waits for the lock until `deadline` (epoch ms); false if it passed. */
  async lock(resource: string, token: string, leaseMs: number, deadline: number): Promise<boolean> {
    for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
      if (await this.tryLock(resource, token, leaseMs)) return true;
      if (Date.now() + wait >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, wait / 2 + Math.random() * wait));
    }
  }

  async renew(resource: string, token: string, leaseMs: number): Promise<boolean> {
    return (await RENEW.run(this.redis, 1, this.keys.lock(resource), token, String(leaseMs))) === 1;
  }

  /** Renews the lock's lease every third of its length until stopped. */
  keep(resource: string, token: string, leaseMs: number): StopRenewing {
    return keepRenewing(() => this.renew(resource, token, leaseMs), leaseMs);
  }

  async unlock(resource: string, token: string): Promise<boolean> {
    return (await RELEASE.run(this.redis, 1, this.keys.lock(resource), token)) === 1;
  }
}
