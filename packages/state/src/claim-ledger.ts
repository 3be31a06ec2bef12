import { createHash } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import type { Redis } from './redis-client.js';
import type { Keyspace } from './keyspace.js';
import { keepRenewing } from './lease.js';
import type { StopRenewing } from './lease.js';
import { LuaScript } from './lua-script.js';

/**
 * The claim ledger: who holds the right to answer a command or to run a write, and the answer once
 * there is one. Every claim in Gatehouse is an entry here — the policy's claim of a command_id,
 * the executor's claim of an order's command and of a write's idempotency key — with one set of
 * states, one set of operations and one family of scripts.
 *
 * An entry is `in_flight` (held by one owner under a lease, perhaps with its answer staged), then
 * `succeeded` or `failed` (settled, keeping its answer) or `unknown` (handed to an operator, who
 * resolves it). The operations:
 * - claim: take an entry, or learn who holds it or how it ended. An owner whose lease ran out
 *   loses it to the next claimant, who gets it `orphaned`, with the staged answer if there is one.
 * - stage: keep the answer about to go out with the entry, so that whoever takes it over repeats
 *   that answer and never makes a second one.
 * - settle: the final state and answer, replacing the staged one.
 * - give back: an entry nothing was answered under is deleted (the next claim starts afresh); a
 *   staged one keeps its answer and its lease ends, so the next claimant repeats it at once.
 * - renew: extend the lease. resolve: an operator's answer to an unknown outcome.
 *
 * Claims, stages, resolutions and settling an unknown outcome are durable (LuaScript.runDurable): on
 * a connection that requires replicas they count only once the replicas hold them, so no failover
 * takes back a key a write ran under, an answer that went out, or an outcome an operator must resolve.
 * Settling a known outcome, renewing and giving back are not: losing one leaves the entry in flight,
 * which the next owner settles from its staged answer or the status query.
 * Leases are judged by the Redis server's clock, so every instance judges them alike.
 */
export const LedgerState = {
  in_flight: 'in_flight',
  succeeded: 'succeeded',
  failed: 'failed',
  unknown: 'unknown',
} as const;
export type LedgerState = (typeof LedgerState)[keyof typeof LedgerState];
/** How an entry ended. */
export type Verdict = Exclude<LedgerState, 'in_flight'>;

/** What a claim found. */
export type Claim =
  /** A new entry (or the same owner again): this owner holds it. */
  | { readonly kind: 'claimed' }
  /** Settled before: answer with the stored answer, never run or decide again. */
  | { readonly kind: 'settled'; readonly verdict: 'succeeded' | 'failed'; readonly answer: string }
  /** Handed to an operator as unknown; the stored answer is the OUTCOME_UNKNOWN answer. */
  | { readonly kind: 'unknown'; readonly answer: string }
  /** The same entry under other arguments. */
  | { readonly kind: 'reused' }
  /** Another live owner holds it; `commandId` is the command it claimed the entry for ('' when not given). */
  | { readonly kind: 'in_progress'; readonly owner: string; readonly leaseLeftMs: number; readonly commandId: string }
  /**
   * The previous owner's lease ran out in flight: this owner now holds it. `staged` is the answer
   * the previous owner staged before it stopped (it may have gone out): answer with it, never with a
   * second one; `stagedAt` is when it was staged (the Redis server's clock, ms). Without one, what the
   * previous owner did is not known here.
   */
  | { readonly kind: 'orphaned'; readonly previousOwner: string; readonly staged?: string; readonly stagedAt?: number }
  /** A new entry whose companion record (a command's run) does not exist: nothing was stored. */
  | { readonly kind: 'no_run' };

/** The terms an entry is claimed on; an entry Redis lost is made again with them when its answer is staged. */
export interface ClaimTerms {
  readonly argumentsSha256: string;
  readonly leaseMs: number;
  /** The command the entry is claimed for ('' when not given). */
  readonly commandId: string;
}

/** What staging found: staged, or the entry taken over by another owner (or settled). */
export type Staging = 'staged' | 'taken';

export interface LedgerRecord {
  readonly state: LedgerState;
  readonly arguments_sha256: string;
  readonly owner: string;
  readonly outcome: string | null;
  readonly updated_at: number;
  readonly created_at: number;
}

/** What an operator's resolution found: resolved (now, or the same resolution before, unpublished), or why not. */
export type Resolution = { readonly kind: 'resolved'; readonly outcome: string } | { readonly kind: 'not_unknown' | 'not_found' };

// Every script starts here, with KEYS[1] the entry. `now` is the server's time (ms). An entry an
// earlier release of the policy service wrote as one string, `<c|s|a>:<sha256>:<lease end>[:<staged>]`,
// becomes a hash first, keeping its TTL and holding no owner: it is claimed, staged and settled as
// any other.
const HEAD = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('TYPE', KEYS[1]).ok == 'string' then
  local v = redis.call('GET', KEYS[1])
  local ttl = redis.call('PTTL', KEYS[1])
  local rest = string.sub(v, 68)
  local colon = string.find(rest, ':', 1, true)
  local lease, staged = rest, nil
  if colon then lease = string.sub(rest, 1, colon - 1) staged = string.sub(rest, colon + 1) end
  local kind = string.sub(v, 1, 1)
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'state', kind == 'a' and 'succeeded' or 'in_flight', 'arguments_sha256', string.sub(v, 3, 66),
    'owner', '', 'lease_until', tonumber(lease) or 0, 'outcome', '', 'created_at', now, 'updated_at', now, 'command_id', '',
    'v', tonumber(t[1]) * 1000000 + tonumber(t[2]), 'staged_at', (tonumber(lease) or now) - 60000)
  if kind == 's' and staged then redis.call('HSET', KEYS[1], 'staged', staged) end
  if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
end
local function bump() return redis.call('HINCRBY', KEYS[1], 'v', 1) end
local function seen() return tonumber(redis.call('HGET', KEYS[1], 'v') or '0') end
`;

// Makes KEYS[1] anew, in flight under owner `o` with lease `lease`, TTL `ttl` (ms), for sha `sha` and command `cmd`.
// `v` counts an entry's steps; a new entry starts it from the server's clock in microseconds, so that it
// keeps rising across an entry given back and made again (each script takes longer than a microsecond).
const MAKE = `local function make(sha, o, lease, ttl, cmd)
  local v = tonumber(t[1]) * 1000000 + tonumber(t[2])
  redis.call('HSET', KEYS[1], 'state', 'in_flight', 'arguments_sha256', sha, 'owner', o,
    'lease_until', now + lease, 'created_at', now, 'updated_at', now, 'command_id', cmd, 'v', v)
  redis.call('PEXPIRE', KEYS[1], ttl)
  return v
end
`;

// KEYS[1] the entry, KEYS[2] its companion (a command's run record) when given; ARGV[1] arguments sha256, ARGV[2]
// owner, ARGV[3] lease (ms), ARGV[4] a new entry's TTL (ms), ARGV[5] command id, ARGV[6] '1' when a new entry needs
// its companion to exist. Every reply has six parts, {kind, a, b, c, companion ('' when none), v (the entry's step
// count after this one)}: {'claimed'}, {'settled', verdict, answer}, {'unknown', answer}, {'reused'},
// {'in_progress', owner, lease left (ms), command id}, {'orphaned', previous owner, staged answer, when it was staged
// (server ms; '' when nothing is staged)}, {'no_run'}.
const CLAIM = new LuaScript(`${HEAD}${MAKE}
local companion = ''
if #KEYS > 1 then companion = redis.call('GET', KEYS[2]) or '' end
local rec = redis.call('HMGET', KEYS[1], 'state', 'arguments_sha256', 'owner', 'lease_until', 'outcome', 'command_id', 'staged', 'v', 'staged_at')
local state = rec[1]
local lease = tonumber(ARGV[3])
local v = tonumber(rec[8] or '0')
if not state then
  if ARGV[6] == '1' and companion == '' then return {'no_run', '', '', '', '', 0} end
  v = make(ARGV[1], ARGV[2], lease, tonumber(ARGV[4]), ARGV[5])
  return {'claimed', '', '', '', companion, v}
end
if rec[2] ~= ARGV[1] then return {'reused', '', '', '', companion, v} end
if state == 'succeeded' or state == 'failed' then return {'settled', state, rec[5] or '', '', companion, v} end
if state == 'unknown' then return {'unknown', rec[5] or '', '', '', companion, v} end
if rec[3] == ARGV[2] then
  redis.call('HSET', KEYS[1], 'lease_until', now + lease, 'updated_at', now)
  return {'claimed', '', '', '', companion, bump()}
end
local left = tonumber(rec[4]) - now
if left > 0 then return {'in_progress', rec[3], left, rec[6] or '', companion, v} end
redis.call('HSET', KEYS[1], 'owner', ARGV[2], 'lease_until', now + lease, 'updated_at', now, 'previous_owner', rec[3])
if rec[7] then return {'orphaned', rec[3], rec[7], rec[9] or '0', companion, bump()} end
return {'orphaned', rec[3], '', '', companion, bump()}
`);

// KEYS[1] the entry; ARGV[1] owner, ARGV[2] the answer to stage, and what an entry Redis lost (a restart without
// persistence, a failover) is made again with: ARGV[3] arguments sha256, ARGV[4] lease (ms), ARGV[5] TTL (ms),
// ARGV[6] command id. {1, v}: staged (on an entry made again, in flight under this owner); {0, v}: the entry is
// another owner's now, another payload's, or settled.
const STAGE = new LuaScript(`${HEAD}${MAKE}
local rec = redis.call('HMGET', KEYS[1], 'state', 'owner', 'arguments_sha256')
if not rec[1] then
  make(ARGV[3], ARGV[1], tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6])
  redis.call('HSET', KEYS[1], 'staged', ARGV[2], 'staged_at', now)
  return {1, bump()}
end
if rec[1] ~= 'in_flight' or rec[2] ~= ARGV[1] or rec[3] ~= ARGV[3] then return {0, seen()} end
redis.call('HSET', KEYS[1], 'staged', ARGV[2], 'staged_at', now, 'updated_at', now)
return {1, bump()}
`);

// KEYS[1] the entry; ARGV[1] owner, ARGV[2] verdict, ARGV[3] answer, ARGV[4] the entry's new TTL (ms; '' keeps
// it). Drops any staged answer. Returns {1, v}, or {0, v} when the entry is not in flight under this owner.
const SETTLE = new LuaScript(`${HEAD}
local rec = redis.call('HMGET', KEYS[1], 'state', 'owner')
if rec[1] ~= 'in_flight' or rec[2] ~= ARGV[1] then return {0, seen()} end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'outcome', ARGV[3], 'updated_at', now, 'lease_until', 0)
redis.call('HDEL', KEYS[1], 'staged', 'staged_at')
if ARGV[4] ~= '' then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4])) end
return {1, bump()}
`);

// KEYS[1] the entry; ARGV[1] owner. An entry with nothing staged is deleted; a staged one keeps its answer and its
// lease ends now. Returns {1, v}, or {0, v} when the entry is not in flight under this owner.
const GIVE_BACK = new LuaScript(`${HEAD}
local rec = redis.call('HMGET', KEYS[1], 'state', 'owner', 'staged')
if rec[1] ~= 'in_flight' or rec[2] ~= ARGV[1] then return {0, seen()} end
if rec[3] then
  redis.call('HSET', KEYS[1], 'lease_until', 0, 'updated_at', now)
  return {1, bump()}
end
local v = seen() + 1
redis.call('DEL', KEYS[1])
return {1, v}
`);

// KEYS[1] the entry; ARGV[1] owner, ARGV[2] lease (ms, from now). Returns {1, v} renewed, {0, v} when the entry is
// not in flight under this owner.
const RENEW = new LuaScript(`${HEAD}
local rec = redis.call('HMGET', KEYS[1], 'state', 'owner')
if rec[1] ~= 'in_flight' or rec[2] ~= ARGV[1] then return {0, seen()} end
redis.call('HSET', KEYS[1], 'lease_until', now + tonumber(ARGV[2]), 'updated_at', now)
return {1, bump()}
`);

// KEYS[1] the entry; ARGV[1] the resolved state ('succeeded' or 'failed'), ARGV[2] answer, ARGV[3] who resolved it,
// ARGV[4] the resolution's fingerprint. Returns {'resolved', answer}: an unknown outcome resolved now, or the same
// resolution again (same fingerprint) while its answer is not yet marked published, with the answer it stored
// then. Otherwise {state} ('' when there is no entry). Each reply ends with v. The TTL is left as it was.
const RESOLVE = new LuaScript(`${HEAD}
local rec = redis.call('HMGET', KEYS[1], 'state', 'outcome', 'resolution', 'published')
local state = rec[1]
if state ~= 'unknown' then
  if state and rec[3] == ARGV[4] and not rec[4] then return {'resolved', rec[2], seen()} end
  return {state or '', '', seen()}
end
redis.call('HSET', KEYS[1], 'state', ARGV[1], 'outcome', ARGV[2], 'updated_at', now, 'resolved_by', ARGV[3], 'resolution', ARGV[4])
return {'resolved', ARGV[2], bump()}
`);

// KEYS[1] the entry. Marks a resolution's answer published (a retry of the same resolution is refused
// from then on); an entry that is gone stays gone. Returns its v (0 when there is no entry).
const MARK_PUBLISHED = new LuaScript(`${HEAD}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'published', '1')
return bump()
`);

/** The shape of every run id the control API registers: a command naming anything else names no run. */
export const RUN_ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

export interface LedgerOptions {
  /** How long a settled entry answers replays (default 24 h). */
  readonly retentionMs?: number;
}

/** Where an entry lives: its Redis key, and the companion record a new entry needs (a command's run). */
interface Place {
  readonly entry: string;
  readonly companion?: string | undefined;
  /** A new entry needs its companion: without it the claim answers `no_run` and stores nothing. */
  readonly needsCompanion?: boolean;
}

/** One step of the ledger as it happened, from the script's own reply: what a history check replays. */
export interface LedgerStep {
  readonly entry: string;
  readonly op: 'claim' | 'stage' | 'settle' | 'give_back' | 'renew' | 'resolve' | 'mark_published';
  readonly owner: string;
  /**
   * The script's answer: a claim's kind, `staged`/`taken`, `done`/`refused`, a resolution's kind; or
   * `attempted`, noted just before the script runs (its step follows once the reply is back).
   */
  readonly reply: string;
  /** A settlement's verdict, or whether a claim that found the entry orphaned found an answer staged. */
  readonly detail?: string;
  /**
   * The sha256 of the answer the step staged, settled or resolved, or that a claim found stored or
   * staged (never the answer itself): a repeated answer is the same answer.
   */
  readonly answer?: string;
  /**
   * The entry's step count after this step (a step that changed nothing reports the count it saw):
   * orders one entry's steps, whichever process took them.
   */
  readonly version: number;
}

/** Receives every ledger step of this process (tests that check histories listen here). */
export type LedgerListener = (step: LedgerStep) => void;
const listeners = new Set<LedgerListener>();
/** Adds a listener of every ledger step this process takes; returns how to remove it. */
export function onLedgerStep(listener: LedgerListener): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}
const note = (step: LedgerStep | (() => LedgerStep)): void => {
  if (listeners.size === 0) return;
  const made = typeof step === 'function' ? step() : step;
  for (const listener of listeners) listener(made);
};
/**
 * Noted before a script runs: a process killed before its reply came back leaves the attempt
 * without its step, and a history check knows the entry's later steps follow one it cannot see.
 */
const attempt = (entry: string, op: LedgerStep['op'], owner: string): void =>
  note(() => ({ entry, op, owner, reply: 'attempted', version: 0 }));
const fingerprint = (answer: string): string => createHash('sha256').update(answer).digest('hex');

/**
 * Appends every ledger step this process takes to `path`, one JSON line each, naming `process` and
 * when its reply was back (`at`, this machine's clock, ms; a check of a history across a Redis
 * failover tells steps before the failover from steps after it by this) (GATEHOUSE_LEDGER_HISTORY):
 * the history the fault tests check against the protocol model. Each
 * line is written before the step's caller goes on, so a process killed at any point leaves every
 * step it took; lines of processes sharing the file never interleave (each is one append).
 * Returns how to stop.
 */
export function recordLedgerSteps(path: string, process: string): () => void {
  // Opened once for appending: each line is one write(2) at the file's end.
  const fd = openSync(path, 'a');
  const stop = onLedgerStep((step) => writeSync(fd, `${JSON.stringify({ ...step, process, at: Date.now() })}\n`));
  return () => {
    stop();
    closeSync(fd);
  };
}

/**
 * The ledger's entries: by name (an executor's command claim or a write's idempotency key,
 * `entry(name)`) or by command (the policy's claim of a command_id, `commandEntry`).
 */
export class ClaimLedger {
  readonly retentionMs: number;

  constructor(
    private readonly redis: Redis,
    private readonly keys: Keyspace,
    options: LedgerOptions = {},
  ) {
    this.retentionMs = options.retentionMs ?? 24 * 3600 * 1000;
  }

  /** `commandId` names the command the key is claimed for, so a copy of that same command can tell it is waiting on itself. */
  claim(name: string, argumentsSha256: string, owner: string, leaseMs: number, commandId = ''): Promise<Claim> {
    return this.claimAt(this.place(name), { argumentsSha256, leaseMs, commandId }, owner, this.retentionMs).then((c) => c.claim);
  }

  /** Keeps the answer about to go out with the entry; `taken` when another owner holds it (it answers instead). */
  stage(name: string, owner: string, answer: string, terms: ClaimTerms): Promise<Staging> {
    return this.stageAt(this.place(name), owner, answer, terms, this.retentionMs);
  }

  /** The final state and answer; false when this owner no longer holds the entry (its lease was taken over). */
  settle(name: string, owner: string, verdict: Verdict, answer: string): Promise<boolean> {
    return this.settleAt(this.place(name), owner, verdict, answer, this.retentionMs);
  }

  /**
   * Gives a held entry back: one with nothing staged is deleted, so the next claim starts afresh
   * (nothing ran, or the system of record says an identical call may succeed); a staged one keeps
   * its answer, its lease ended.
   */
  giveBack(name: string, owner: string): Promise<boolean> {
    return this.giveBackAt(this.place(name), owner);
  }

  /**
   * Claims an entry, waiting while another live owner holds it, until `deadline` (ms since the
   * epoch): see `claimWhenFree`.
   */
  claimWhenFree(name: string, argumentsSha256: string, owner: string, leaseMs: number, deadline: number, commandId = ''): Promise<Claim> {
    return claimWhenFree(() => this.claim(name, argumentsSha256, owner, leaseMs, commandId), deadline);
  }

  /** Renews the lease of a held entry every third of its length until stopped. */
  keep(name: string, owner: string, leaseMs: number): StopRenewing {
    return keepRenewing(() => this.renew(name, owner, leaseMs), leaseMs);
  }

  /** Extends the lease of a held entry; false when this owner lost it. */
  renew(name: string, owner: string, leaseMs: number): Promise<boolean> {
    return this.renewAt(this.place(name), owner, leaseMs);
  }

  private async renewAt(place: Place, owner: string, leaseMs: number): Promise<boolean> {
    const entry = place.entry;
    attempt(entry, 'renew', owner);
    const [done, version] = (await RENEW.run(this.redis, 1, entry, owner, String(leaseMs))) as [number, number];
    note({ entry, op: 'renew', owner, reply: done === 1 ? 'done' : 'refused', version });
    return done === 1;
  }

  /**
   * An operator's resolution of an unknown outcome. `fingerprint` names the resolution (its
   * request): until resolutionPublished() marks its answer out, the same resolution again gets the
   * answer stored the first time, so a retry (after ReplicationUnconfirmed, or a lost reply)
   * publishes that answer and no other.
   */
  async resolveUnknown(
    name: string,
    resolution: { readonly state: 'succeeded' | 'failed'; readonly outcome: string; readonly by: string; readonly fingerprint: string },
  ): Promise<Resolution> {
    attempt(this.keys.idempotency(name), 'resolve', resolution.by);
    const [reply, outcome, version] = (await RESOLVE.runDurable(
      this.redis,
      1,
      this.keys.idempotency(name),
      resolution.state,
      resolution.outcome,
      resolution.by,
      resolution.fingerprint,
    )) as [string, string, number];
    const found: Resolution =
      reply === 'resolved' ? { kind: 'resolved', outcome: outcome ?? '' } : { kind: reply === '' ? 'not_found' : 'not_unknown' };
    note(() => ({
      entry: this.keys.idempotency(name),
      op: 'resolve',
      owner: resolution.by,
      reply: found.kind,
      detail: resolution.state,
      ...(found.kind === 'resolved' ? { answer: fingerprint(found.outcome) } : {}),
      version,
    }));
    return found;
  }

  /** Marks a resolution's answer published: the same resolution again is then refused as already known. */
  async resolutionPublished(name: string): Promise<void> {
    const entry = this.keys.idempotency(name);
    attempt(entry, 'mark_published', '');
    const version = (await MARK_PUBLISHED.runDurable(this.redis, 1, entry)) as number;
    note({ entry, op: 'mark_published', owner: '', reply: 'marked', version });
  }

  async get(name: string): Promise<LedgerRecord | undefined> {
    const raw = await this.redis.hgetall(this.keys.idempotency(name));
    if (raw['state'] === undefined) return undefined;
    return {
      state: raw['state'] as LedgerState,
      arguments_sha256: raw['arguments_sha256'] ?? '',
      owner: raw['owner'] ?? '',
      outcome: raw['outcome'] ?? null,
      updated_at: Number(raw['updated_at'] ?? 0),
      created_at: Number(raw['created_at'] ?? 0),
    };
  }

  /**
   * The policy's entry for `commandId` of `tenant` and `runId`: claimed only for a run that exists
   * (the claim reads the run's record beside it, in one script), remembered for `ttlMs`. Tenant and
   * run id are length-prefixed, so no two (tenant, run, command) triples hash alike, whatever they
   * hold; a run id that cannot name a run tags the entry with its hash, keeping a hostile id out of
   * the key.
   */
  commandEntry(tenant: string, runId: string, commandId: string): CommandEntry {
    const hash = createHash('sha256').update(`${tenant.length}:${tenant}${runId.length}:${runId}`).update(commandId).digest('hex');
    const place: Place = RUN_ID_PATTERN.test(runId)
      ? { entry: this.keys.commandClaim(runId, hash), companion: this.keys.run(runId), needsCompanion: true }
      : { entry: this.keys.commandClaim(createHash('sha256').update(runId).digest('hex'), hash), needsCompanion: true };
    return {
      claim: async (terms, owner, ttlMs) => {
        const { claim, companion } = await this.claimAt(place, terms, owner, ttlMs);
        return { claim, run: companion === '' ? null : companion };
      },
      claimWhenFree(terms, owner, ttlMs, deadline) {
        return claimWhenFree(() => this.claim(terms, owner, ttlMs), deadline);
      },
      stage: (owner, answer, terms, ttlMs) => this.stageAt(place, owner, answer, terms, ttlMs),
      settle: (owner, answer) => this.settleAt(place, owner, 'succeeded', answer, null),
      giveBack: (owner) => this.giveBackAt(place, owner),
      renew: (owner, leaseMs) => this.renewAt(place, owner, leaseMs),
    };
  }

  private place(name: string): Place {
    return { entry: this.keys.idempotency(name) };
  }

  private async claimAt(place: Place, terms: ClaimTerms, owner: string, ttlMs: number): Promise<{ claim: Claim; companion: string }> {
    const keys = place.companion === undefined ? [place.entry] : [place.entry, place.companion];
    attempt(place.entry, 'claim', owner);
    const reply = (await CLAIM.runDurable(
      this.redis,
      keys.length,
      ...keys,
      terms.argumentsSha256,
      owner,
      String(terms.leaseMs),
      String(Math.max(1, Math.ceil(ttlMs))),
      terms.commandId,
      place.needsCompanion === true ? '1' : '0',
    )) as ClaimReply;
    const claim = claimOf(reply);
    note(() => ({
      entry: place.entry,
      op: 'claim',
      owner,
      reply: claim.kind,
      ...(claim.kind === 'orphaned' ? { detail: claim.staged === undefined ? 'nothing_staged' : 'staged' } : {}),
      ...(claim.kind === 'orphaned' && claim.staged !== undefined ? { answer: fingerprint(claim.staged) } : {}),
      ...(claim.kind === 'settled' || claim.kind === 'unknown' ? { answer: fingerprint(claim.answer) } : {}),
      version: Number(reply[5]),
    }));
    return { claim, companion: String(reply[4] ?? '') };
  }

  private async stageAt(place: Place, owner: string, answer: string, terms: ClaimTerms, ttlMs: number): Promise<Staging> {
    attempt(place.entry, 'stage', owner);
    const [staged, version] = (await STAGE.runDurable(
      this.redis,
      1,
      place.entry,
      owner,
      answer,
      terms.argumentsSha256,
      String(terms.leaseMs),
      String(Math.max(1, Math.ceil(ttlMs))),
      terms.commandId,
    )) as [number, number];
    const staging: Staging = staged === 1 ? 'staged' : 'taken';
    note(() => ({ entry: place.entry, op: 'stage', owner, reply: staging, answer: fingerprint(answer), version }));
    return staging;
  }

  private async settleAt(place: Place, owner: string, verdict: Verdict, answer: string, ttlMs: number | null): Promise<boolean> {
    const ttl = ttlMs === null ? '' : String(ttlMs);
    attempt(place.entry, 'settle', owner);
    // An unknown outcome is settled durably: lost in a failover, it would leave the entry in flight
    // with the unknown answer staged, which no operator can resolve until something claims it again.
    const args = [place.entry, owner, verdict, answer, ttl];
    const [done, version] = (await (verdict === LedgerState.unknown
      ? SETTLE.runDurable(this.redis, 1, ...args)
      : SETTLE.run(this.redis, 1, ...args))) as [number, number];
    note(() => ({
      entry: place.entry,
      op: 'settle',
      owner,
      reply: done === 1 ? 'done' : 'refused',
      detail: verdict,
      answer: fingerprint(answer),
      version,
    }));
    return done === 1;
  }

  private async giveBackAt(place: Place, owner: string): Promise<boolean> {
    attempt(place.entry, 'give_back', owner);
    const [done, version] = (await GIVE_BACK.run(this.redis, 1, place.entry, owner)) as [number, number];
    note({ entry: place.entry, op: 'give_back', owner, reply: done === 1 ? 'done' : 'refused', version });
    return done === 1;
  }
}

/** The policy's entry for one command: the ledger's operations, bound to the command's entry and run. */
export interface CommandEntry {
  /** Claims the command (only for a run that exists) and reads its run record (JSON; null when there is none). */
  claim(terms: ClaimTerms, owner: string, ttlMs: number): Promise<{ readonly claim: Claim; readonly run: string | null }>;
  /** `claim`, waiting while another live owner holds the command, until `deadline` (`claimWhenFree`). */
  claimWhenFree(
    terms: ClaimTerms,
    owner: string,
    ttlMs: number,
    deadline: number,
  ): Promise<{ readonly claim: Claim; readonly run: string | null }>;
  /** Stages the decision about to be published; an entry Redis lost is made again, held by `owner`, for `ttlMs`. */
  stage(owner: string, answer: string, terms: ClaimTerms, ttlMs: number): Promise<Staging>;
  /** The decision is published: a later copy of the command gets nothing. */
  settle(owner: string, answer: string): Promise<boolean>;
  giveBack(owner: string): Promise<boolean>;
  /** Extends the lease while `owner` holds the entry; false when it lost it. */
  renew(owner: string, leaseMs: number): Promise<boolean>;
}

/** The claim script's reply: kind, three parts that depend on it, the companion record, the entry's version. */
type ClaimReply = readonly [string, string | number, string | number, string | number, string, number];

function claimOf(reply: ClaimReply): Claim {
  switch (reply[0]) {
    case 'claimed':
      return { kind: 'claimed' };
    case 'settled':
      return { kind: 'settled', verdict: reply[1] === 'failed' ? 'failed' : 'succeeded', answer: String(reply[2]) };
    case 'unknown':
      return { kind: 'unknown', answer: String(reply[1]) };
    case 'reused':
      return { kind: 'reused' };
    case 'no_run':
      return { kind: 'no_run' };
    case 'in_progress':
      return { kind: 'in_progress', owner: String(reply[1]), leaseLeftMs: Number(reply[2]), commandId: String(reply[3]) };
    default:
      return reply[3] === ''
        ? { kind: 'orphaned', previousOwner: String(reply[1]) }
        : { kind: 'orphaned', previousOwner: String(reply[1]), staged: String(reply[2]), stagedAt: Number(reply[3]) };
  }
}

/**
 * Claims an entry, waiting while another live owner holds it: that owner either finishes (the claim
 * then finds its answer) or dies (its lease runs out and the claim finds it orphaned). Skipping an
 * entry in flight instead would lose the call if its owner died. Gives up at `deadline` (ms since
 * the epoch), answering what the last claim found.
 */
export async function claimWhenFree<T extends Claim | { readonly claim: Claim }>(claim: () => Promise<T>, deadline: number): Promise<T> {
  for (;;) {
    const found = await claim();
    const what: Claim = 'claim' in found ? found.claim : found;
    if (what.kind !== 'in_progress' || Date.now() >= deadline) return found;
    await new Promise<void>((resolve) => setTimeout(resolve, Math.min(250, Math.max(20, what.leaseLeftMs))));
  }
}
