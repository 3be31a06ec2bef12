import type { Redis } from './redis-client.js';
import type { Keyspace } from './keyspace.js';
import { LuaScript } from './lua-script.js';

// A sliding-window log: exact under any number of instances, because the check and the insert are
// one script and the clock is the server's.
// KEYS[1] the window (a sorted set: call id -> time taken, ms); ARGV[1] the limit, ARGV[2] the window (ms), ARGV[3] the
// call id. Returns {1, 0} when allowed, or {0, ms until the oldest call leaves the window}.
const TAKE = new LuaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
-- The same call asked again (a redelivered command) keeps the answer it had.
if redis.call('ZSCORE', KEYS[1], ARGV[3]) then return {1, 0} end
local n = redis.call('ZCARD', KEYS[1])
if n < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return {1, 0}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local wait = tonumber(oldest[2]) + window - now
if wait < 1 then wait = 1 end
return {0, wait}
`);

export type RateDecision = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterMs: number };

export interface RateLimit {
  readonly limit: number;
  readonly windowMs: number;
}

/** Per-tool rate limits shared by every policy instance. */
export class RateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keyspace,
  ) {}

  /** Takes one call from the window of `tool` for `scope` (a tenant or a run); `callId` must be unique. */
  async take(tool: string, scope: string, limit: RateLimit, callId: string): Promise<RateDecision> {
    const [allowed, wait] = (await TAKE.run(
      this.redis,
      1,
      this.keys.rateWindow(tool, scope),
      String(limit.limit),
      String(limit.windowMs),
      callId,
    )) as [number, number];
    return allowed === 1 ? { allowed: true } : { allowed: false, retryAfterMs: wait };
  }
}
