import type { Redis } from 'ioredis';
import type { Keyspace } from './keyspace.js';

export const IdempotencyState = {
  in_flight: 'in_flight',
  succeeded: 'succeeded',
  failed: 'failed',
  unknown: 'unknown',
} as const;
export type IdempotencyState = (typeof IdempotencyState)[keyof typeof IdempotencyState];

/** What claiming a key found. */
export type Claim =
  /** New key (or a redelivery to the same owner): this owner runs the operation. */
  | { readonly kind: 'claimed' }
  /** Finished before: answer with the stored outcome, never run again. */
  | { readonly kind: 'stored'; readonly state: 'succeeded' | 'failed'; readonly outcome: string }
  /** Declared unknown and handed to an operator; the stored outcome is the OUTCOME_UNKNOWN answer. */
  | { readonly kind: 'unknown'; readonly outcome: string }
  /** Same key, other arguments. */
  | { readonly kind: 'reused' }
  /** Another live owner is running it now. */
  | { readonly kind: 'in_progress'; readonly owner: string; readonly leaseLeftMs: number }
  /** The previous owner's lease ran out mid-flight: this owner now holds it and must ask the status query, not re-run blindly. */
  | { readonly kind: 'orphaned'; readonly previousOwner: string };

export interface IdempotencyRecord {
  readonly state: IdempotencyState;
  readonly arguments_sha256: string;
  readonly owner: string;
  readonly outcome: string | null;
  readonly updated_at: number;
  readonly created_at: number;
}

const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

const CLAIM = `${NOW}
local rec = redis.call('HMGET', KEYS[1], 'state', 'arguments_sha256', 'owner', 'lease_until', 'outcome')
local state = rec[1]
local lease = tonumber(ARGV[3])
if not state then
  redis.call('HSET', KEYS[1], 'state', 'in_flight', 'arguments_sha256', ARGV[1], 'owner', ARGV[2],
    'lease_until', now + lease, 'created_at', now, 'updated_at', now)
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]))
  return {'claimed'}
end
if rec[2] ~= ARGV[1] then return {'reused'} end
if state == 'succeeded' or state == 'failed' then return {'stored', state, rec[5]} end
if state == 'unknown' then return {'unknown', rec[5] or ''} end
if rec[3] == ARGV[2] then
  redis.call('HSET', KEYS[1], 'lease_until', now + lease, 'updated_at', now)
  return {'claimed'}
end
local left = tonumber(rec[4]) - now
if left > 0 then return {'in_progress', rec[3], left} end
redis.call('HSET', KEYS[1], 'owner', ARGV[2], 'lease_until', now + lease, 'updated_at', now, 'previous_owner', rec[3])
return {'orphaned', rec[3]}
`;

const FINISH = `${NOW}
local rec = redis.call('HMGET', KEYS[1], 'state', 'owner')
if rec[1] ~= 'in_flight' or rec[2] ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'outcome', ARGV[3], 'updated_at', now, 'lease_until', 0)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]))
return 1
`;

const RENEW = `${NOW}
local rec = redis.call('HMGET', KEYS[1], 'state', 'owner')
if rec[1] ~= 'in_flight' or rec[2] ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'lease_until', now + tonumber(ARGV[2]), 'updated_at', now)
return 1
`;

const ABANDON = `
local rec = redis.call('HMGET', KEYS[1], 'state', 'owner')
if rec[1] ~= 'in_flight' or rec[2] ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`;

const RESOLVE = `${NOW}
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'unknown' then return state or '' end
redis.call('HSET', KEYS[1], 'state', ARGV[1], 'outcome', ARGV[2], 'updated_at', now, 'resolved_by', ARGV[3])
return 'resolved'
`;

export interface IdempotencyOptions {
  /** How long a finished record answers replays (default 24 h). */
  readonly retentionMs?: number;
}

/**
 * The idempotency protocol in Redis: `key → {state, arguments_sha256, owner, lease, outcome}`, each
 * transition one atomic script. The outcome is opaque text (the caller's serialized result).
 */
export class IdempotencyStore {
  readonly retentionMs: number;

  constructor(
    private readonly redis: Redis,
    private readonly keys: Keyspace,
    options: IdempotencyOptions = {},
  ) {
    this.retentionMs = options.retentionMs ?? 24 * 3600 * 1000;
  }

  async claim(key: string, argumentsSha256: string, owner: string, leaseMs: number): Promise<Claim> {
    const reply = (await this.redis.eval(
      CLAIM,
      1,
      this.keys.idempotency(key),
      argumentsSha256,
      owner,
      String(leaseMs),
      String(this.retentionMs),
    )) as [string, ...(string | number)[]];
    switch (reply[0]) {
      case 'claimed':
        return { kind: 'claimed' };
      case 'stored':
        return { kind: 'stored', state: reply[1] === 'failed' ? 'failed' : 'succeeded', outcome: String(reply[2] ?? '') };
      case 'unknown':
        return { kind: 'unknown', outcome: String(reply[1] ?? '') };
      case 'reused':
        return { kind: 'reused' };
      case 'in_progress':
        return { kind: 'in_progress', owner: String(reply[1]), leaseLeftMs: Number(reply[2]) };
      default:
        return { kind: 'orphaned', previousOwner: String(reply[1]) };
    }
  }

  /** Records the final state; false when this owner no longer holds the key (its lease was taken over). */
  async finish(key: string, owner: string, state: Exclude<IdempotencyState, 'in_flight'>, outcome: string): Promise<boolean> {
    const done = await this.redis.eval(FINISH, 1, this.keys.idempotency(key), owner, state, outcome, String(this.retentionMs));
    return done === 1;
  }

  /** Extends the lease of a running operation; false when this owner lost it. */
  async renew(key: string, owner: string, leaseMs: number): Promise<boolean> {
    return (await this.redis.eval(RENEW, 1, this.keys.idempotency(key), owner, String(leaseMs))) === 1;
  }

  /**
   * Gives a claimed key back untouched, for a call refused before anything ran (e.g. a tampered
   * order): the legitimate call under the same key must still be able to run.
   */
  async abandon(key: string, owner: string): Promise<boolean> {
    return (await this.redis.eval(ABANDON, 1, this.keys.idempotency(key), owner)) === 1;
  }

  /** An operator's resolution of an unknown outcome. */
  async resolveUnknown(
    key: string,
    state: 'succeeded' | 'failed',
    outcome: string,
    resolvedBy: string,
  ): Promise<'resolved' | 'not_unknown' | 'not_found'> {
    const reply = (await this.redis.eval(RESOLVE, 1, this.keys.idempotency(key), state, outcome, resolvedBy)) as string;
    return reply === 'resolved' ? 'resolved' : reply === '' ? 'not_found' : 'not_unknown';
  }

  async get(key: string): Promise<IdempotencyRecord | undefined> {
    const raw = await this.redis.hgetall(this.keys.idempotency(key));
    if (raw['state'] === undefined) return undefined;
    return {
      state: raw['state'] as IdempotencyState,
      arguments_sha256: raw['arguments_sha256'] ?? '',
      owner: raw['owner'] ?? '',
      outcome: raw['outcome'] ?? null,
      updated_at: Number(raw['updated_at'] ?? 0),
      created_at: Number(raw['created_at'] ?? 0),
    };
  }
}
