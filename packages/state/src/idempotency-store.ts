import type { Redis } from './redis-client.js';
import type { Keyspace } from './keyspace.js';
import { LuaScript } from './lua-script.js';

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
  /** Another live owner is running it now; `commandId` is the command it claimed the key for ('' when not given). */
  | { readonly kind: 'in_progress'; readonly owner: string; readonly leaseLeftMs: number; readonly commandId: string }
  /**
   * The previous owner's lease ran out mid-flight: this owner now holds it and must ask the status
   * query, not re-run blindly. `staged` is the answer the previous owner staged before it died
   * (it may have been published): answer with it, never with a second one.
   */
  | { readonly kind: 'orphaned'; readonly previousOwner: string; readonly staged?: string };

export interface IdempotencyRecord {
  readonly state: IdempotencyState;
  readonly arguments_sha256: string;
  readonly owner: string;
  readonly outcome: string | null;
  readonly updated_at: number;
  readonly created_at: number;
}

// NOW reads no KEYS or ARGV: `now` is the server's time (ms), so every instance judges a lease alike.
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

// KEYS[1] the idempotency record; ARGV[1] arguments_sha256, ARGV[2] owner id, ARGV[3] lease (ms), ARGV[4] retention
// (ms, a new record's TTL), ARGV[5] command id ('' when not given). Returns {'claimed'}, {'stored', state, outcome},
// {'unknown', outcome}, {'reused'}, {'in_progress', owner, lease left (ms), command id} or
// {'orphaned', previous owner[, staged answer]}.
const CLAIM = new LuaScript(`${NOW}
local rec = redis.call('HMGET', KEYS[1], 'state', 'arguments_sha256', 'owner', 'lease_until', 'outcome', 'command_id', 'staged')
local state = rec[1]
local lease = tonumber(ARGV[3])
if not state then
  redis.call('HSET', KEYS[1], 'state', 'in_flight', 'arguments_sha256', ARGV[1], 'owner', ARGV[2],
    'lease_until', now + lease, 'created_at', now, 'updated_at', now, 'command_id', ARGV[5])
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
if left > 0 then return {'in_progress', rec[3], left, rec[6] or ''} end
redis.call('HSET', KEYS[1], 'owner', ARGV[2], 'lease_until', now + lease, 'updated_at', now, 'previous_owner', rec[3])
if rec[7] then return {'orphaned', rec[3], rec[7]} end
return {'orphaned', rec[3]}
`);

// KEYS[1] the idempotency record; ARGV[1] owner id, ARGV[2] final state, ARGV[3] outcome, ARGV[4] retention (ms, the
// record's new TTL). Drops any staged answer. Returns 1, or 0 when the record is not in flight under this owner.
const FINISH = new LuaScript(`${NOW}
local rec = redis.call('HMGET', KEYS[1], 'state', 'owner')
if rec[1] ~= 'in_flight' or rec[2] ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'outcome', ARGV[3], 'updated_at', now, 'lease_until', 0)
redis.call('HDEL', KEYS[1], 'staged')
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]))
return 1
`);

// KEYS[1] the idempotency record; ARGV[1] owner id, ARGV[2] the answer to stage, and what a record Redis lost (a
// restart without persistence, a failover) is made again with: ARGV[3] arguments_sha256, ARGV[4] lease (ms),
// ARGV[5] retention (ms, its TTL), ARGV[6] command id. 1: staged (on a record made again, in flight under this owner);
// 0: the key is another owner's now, or settled.
const STAGE = new LuaScript(`${NOW}
local rec = redis.call('HMGET', KEYS[1], 'state', 'owner')
if not rec[1] then
  redis.call('HSET', KEYS[1], 'state', 'in_flight', 'arguments_sha256', ARGV[3], 'owner', ARGV[1],
    'lease_until', now + tonumber(ARGV[4]), 'created_at', now, 'updated_at', now, 'command_id', ARGV[6], 'staged', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[5]))
  return 1
end
if rec[1] ~= 'in_flight' or rec[2] ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'staged', ARGV[2])
return 1
`);

/** What staging an answer found: staged, or the key taken over by another owner (or settled). */
export type Staging = 'staged' | 'taken';

/** The terms a key was claimed on: a record Redis lost is made again with them when its answer is staged. */
export interface ClaimTerms {
  readonly argumentsSha256: string;
  readonly leaseMs: number;
  /** The command the key was claimed for ('' when not given). */
  readonly commandId: string;
}

// KEYS[1] the idempotency record; ARGV[1] owner id, ARGV[2] lease (ms, from now). Returns 1 renewed, 0 when the
// record is not in flight under this owner.
const RENEW = new LuaScript(`${NOW}
local rec = redis.call('HMGET', KEYS[1], 'state', 'owner')
if rec[1] ~= 'in_flight' or rec[2] ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'lease_until', now + tonumber(ARGV[2]), 'updated_at', now)
return 1
`);

// KEYS[1] the idempotency record; ARGV[1] owner id. Deletes the record; returns 1, or 0 when it is not in flight
// under this owner.
const ABANDON = new LuaScript(`
local rec = redis.call('HMGET', KEYS[1], 'state', 'owner')
if rec[1] ~= 'in_flight' or rec[2] ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`);

// KEYS[1] the idempotency record; ARGV[1] the resolved state ('succeeded' or 'failed'), ARGV[2] outcome, ARGV[3] who
// resolved it, ARGV[4] the resolution's fingerprint. Returns {'resolved', outcome}: an unknown outcome resolved now,
// or the same resolution again (same fingerprint) while its answer is not yet marked published, with the outcome it
// stored then. Otherwise {state} ('' when there is no record). The TTL is left as it was.
const RESOLVE = new LuaScript(`${NOW}
local rec = redis.call('HMGET', KEYS[1], 'state', 'outcome', 'resolution', 'published')
local state = rec[1]
if state ~= 'unknown' then
  if state and rec[3] == ARGV[4] and not rec[4] then return {'resolved', rec[2]} end
  return {state or ''}
end
redis.call('HSET', KEYS[1], 'state', ARGV[1], 'outcome', ARGV[2], 'updated_at', now, 'resolved_by', ARGV[3], 'resolution', ARGV[4])
return {'resolved', ARGV[2]}
`);

/** What an operator's resolution found: resolved (now, or the same resolution before, unpublished), or why not. */
export type Resolution = { readonly kind: 'resolved'; readonly outcome: string } | { readonly kind: 'not_unknown' | 'not_found' };

export interface IdempotencyOptions {
  /** How long a finished record answers replays (default 24 h). */
  readonly retentionMs?: number;
}

/**
 * The idempotency protocol in Redis: `key → {state, arguments_sha256, owner, lease, outcome}`, each
 * transition one atomic script. The outcome is opaque text (the caller's serialized result).
 * Claims, staged answers and resolutions are durable (LuaScript.runDurable): on a connection that
 * requires replicas they count only once the replicas hold them, so no failover takes back a key
 * a write ran under or an answer that went out. Finishing, renewing and giving back are not: losing
 * one leaves a key in flight, which the next owner settles from its staged answer or status query.
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

  /** `commandId` names the command the key is claimed for, so a copy of that same command can tell it is waiting on itself. */
  async claim(key: string, argumentsSha256: string, owner: string, leaseMs: number, commandId = ''): Promise<Claim> {
    const reply = (await CLAIM.runDurable(
      this.redis,
      1,
      this.keys.idempotency(key),
      argumentsSha256,
      owner,
      String(leaseMs),
      String(this.retentionMs),
      commandId,
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
        return { kind: 'in_progress', owner: String(reply[1]), leaseLeftMs: Number(reply[2]), commandId: String(reply[3] ?? '') };
      default:
        return reply[2] === undefined
          ? { kind: 'orphaned', previousOwner: String(reply[1]) }
          : { kind: 'orphaned', previousOwner: String(reply[1]), staged: String(reply[2]) };
    }
  }

  /** Records the final state; false when this owner no longer holds the key (its lease was taken over). */
  async finish(key: string, owner: string, state: Exclude<IdempotencyState, 'in_flight'>, outcome: string): Promise<boolean> {
    const done = await FINISH.run(this.redis, 1, this.keys.idempotency(key), owner, state, outcome, String(this.retentionMs));
    return done === 1;
  }

  /**
   * Keeps the answer an owner is about to publish with its record, until finish() replaces it: if
   * the owner dies between publishing and finishing, the next owner answers with this one.
   */
  async stage(key: string, owner: string, outcome: string, terms: ClaimTerms): Promise<boolean> {
    return (await this.stageAnswer(key, owner, outcome, terms)) === 'staged';
  }

  /**
   * As stage(), saying why not: `taken` when another owner holds the key (it answers instead). A
   * key Redis lost is no one else's: it is made again from `terms`, in flight under this owner with
   * the answer staged, so the answer never goes out without its record.
   */
  async stageAnswer(key: string, owner: string, outcome: string, terms: ClaimTerms): Promise<Staging> {
    const reply = await STAGE.runDurable(
      this.redis,
      1,
      this.keys.idempotency(key),
      owner,
      outcome,
      terms.argumentsSha256,
      String(terms.leaseMs),
      String(this.retentionMs),
      terms.commandId,
    );
    return Number(reply) === 1 ? 'staged' : 'taken';
  }

  /** Extends the lease of a running operation; false when this owner lost it. */
  async renew(key: string, owner: string, leaseMs: number): Promise<boolean> {
    return (await RENEW.run(this.redis, 1, this.keys.idempotency(key), owner, String(leaseMs))) === 1;
  }

  /**
   * Gives a claimed key back untouched, for a call refused before anything ran (e.g. a tampered
   * order): the legitimate call under the same key must still be able to run.
   */
  async abandon(key: string, owner: string): Promise<boolean> {
    return (await ABANDON.run(this.redis, 1, this.keys.idempotency(key), owner)) === 1;
  }

  /**
   * An operator's resolution of an unknown outcome. `fingerprint` names the resolution (its
   * request): until resolutionPublished() marks its answer out, the same resolution again gets the
   * outcome stored the first time, so a retry (after ReplicationUnconfirmed, or a lost reply)
   * publishes that answer and no other.
   */
  async resolveUnknown(
    key: string,
    resolution: { readonly state: 'succeeded' | 'failed'; readonly outcome: string; readonly by: string; readonly fingerprint: string },
  ): Promise<Resolution> {
    const [reply, outcome] = (await RESOLVE.runDurable(
      this.redis,
      1,
      this.keys.idempotency(key),
      resolution.state,
      resolution.outcome,
      resolution.by,
      resolution.fingerprint,
    )) as [string, string?];
    if (reply === 'resolved') return { kind: 'resolved', outcome: outcome ?? '' };
    return { kind: reply === '' ? 'not_found' : 'not_unknown' };
  }

  /** Marks a resolution's answer published: the same resolution again is then refused as already known. */
  async resolutionPublished(key: string): Promise<void> {
    await this.redis.hset(this.keys.idempotency(key), 'published', '1');
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
