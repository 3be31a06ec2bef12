import { createHash } from 'node:crypto';
import type { Redis } from './redis-client.js';
import type { Keyspace } from './keyspace.js';
import { LuaScript } from './lua-script.js';

/**
 * What the boundary knows of a command_id when a command arrives:
 * - `first`: never seen; it is now claimed with the command's payload hash.
 * - `in_progress`: the same command is being handled right now by another worker: try again shortly.
 * - `orphaned`: claimed with the same payload, but whoever took it stopped before deciding (its
 *   lease ran out): it is taken over and decided afresh — nothing of it was published.
 *
 * (`in_progress` and `orphaned` mean what they mean for an idempotency key's claim, IdempotencyStore.)
 * - `staged`: decided, but whoever decided stopped before it was surely published: it is taken
 *   over, and the staged decision (`decision`) is published again, never decided a second time.
 * - `answered`: the same command was already handled: a redelivery or a client's re-send, which
 *   gets no second order and no second answer.
 * - `reused`: the command_id was claimed by a different payload: this one gets no answer at all,
 *   since any answer would be a second answer to that command_id.
 * - `no_run`: never seen, and the run it names does not exist (or its id cannot name one): nothing
 *   is stored for it, so a sender cannot grow Redis by naming runs that are not there.
 */
export type CommandClaim = (
  | { readonly kind: 'first' | 'in_progress' | 'orphaned' | 'answered' | 'reused' | 'no_run' }
  | { readonly kind: 'staged'; readonly decision: string }
) & {
  /** The command's run record as stored (JSON), read in the same script; null when there is none. */
  readonly run: string | null;
};

/** The shape of every run id the control API registers: a command naming anything else names no run. */
export const RUN_ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

// The value is `<state>:<payload sha256>:<lease end, ms>[:<staged decision>]`, state c (claimed),
// s (decided, its decision staged) or a (answered). The clock is the server's, so every instance
// judges a lease alike. HEAD reads KEYS[1], the claim (v: false when there is none, then state, sha, lease, staged
// parsed from it), and no ARGV; `now` is the server's time (ms).
const HEAD = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local v = redis.call('GET', KEYS[1])
local state, sha, lease, staged
if v then
  state = string.sub(v, 1, 1)
  sha = string.sub(v, 3, 66)
  local rest = string.sub(v, 68)
  local colon = string.find(rest, ':', 1, true)
  if colon then
    lease = tonumber(string.sub(rest, 1, colon - 1)) or 0
    staged = string.sub(rest, colon + 1)
  else
    lease = tonumber(rest) or 0
  end
end
`;

// Also answers the run record (KEYS[2], when the run id can name a run), which the decision needs:
// one round trip instead of two.
// KEYS[1] the claim (read by HEAD), KEYS[2] the run record, passed only when the run id can name a run;
// ARGV[1] the payload sha256, ARGV[2] a new claim's TTL (ms), ARGV[3] the lease (ms). Returns {kind, staged
// decision ('' unless kind is 'staged'), the run record JSON ('' when none)}.
const CLAIM = new LuaScript(`${HEAD}
local run = ''
if #KEYS > 1 then run = redis.call('GET', KEYS[2]) or '' end
local leased = ':' .. (now + tonumber(ARGV[3]))
if not v then
  if run == '' then return {'no_run', '', ''} end
  redis.call('SET', KEYS[1], 'c:' .. ARGV[1] .. leased, 'PX', ARGV[2])
  return {'first', '', run}
end
if sha ~= ARGV[1] then return {'reused', '', run} end
if state == 'a' then return {'answered', '', run} end
if lease > now then return {'in_progress', '', run} end
if state == 's' then
  redis.call('SET', KEYS[1], 's:' .. sha .. leased .. ':' .. staged, 'KEEPTTL', 'XX')
  return {'staged', staged, run}
end
redis.call('SET', KEYS[1], 'c:' .. sha .. leased, 'KEEPTTL', 'XX')
return {'orphaned', '', run}
`);

// Records the decision of a claimed command before it is published: the one point where a
// decision becomes the command's. Exactly one stage succeeds per claim, so of two workers that
// both decided (one slow, one that took over) only one publishes. A claim Redis lost (a restart
// without persistence) is made again, staged, by the worker that still holds its decision.
// KEYS[1] the claim (read by HEAD); ARGV[1] the payload sha256, ARGV[2] the decision, ARGV[3] the TTL (ms) and
// ARGV[4] the lease (ms) of a claim made again. Returns 1 staged, 0 when the claim is another payload's or is no
// longer in state c (already staged or answered).
const STAGE = new LuaScript(`${HEAD}
if not v then
  redis.call('SET', KEYS[1], 's:' .. ARGV[1] .. ':' .. (now + tonumber(ARGV[4])) .. ':' .. ARGV[2], 'PX', ARGV[3])
  return 1
end
if state ~= 'c' or sha ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], 's:' .. sha .. ':' .. lease .. ':' .. ARGV[2], 'KEEPTTL', 'XX')
return 1
`);

// A script, not a plain SET, so it rides the batch of script calls made in the same turn.
// KEYS[1] the claim; ARGV[1] its answered value, `a:<payload sha256>:0`. Only a claim that exists (XX), keeping its
// TTL; returns 'OK', or nil when the claim is gone. Checks neither state nor payload.
const ANSWERED = new LuaScript(`return redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL', 'XX')`);

// A handling that failed: a claim not yet decided is let go; a staged one keeps its decision, and
// its lease ends now, so the retry publishes that decision at once.
// KEYS[1] the claim (read by HEAD); ARGV[1] the payload sha256. Returns 1 let go or lease ended, 0 when there is
// no claim, it is another payload's, or it is answered.
const RELEASE = new LuaScript(`${HEAD}
if not v or sha ~= ARGV[1] then return 0 end
if state == 'c' then redis.call('DEL', KEYS[1]) return 1 end
if state == 's' then redis.call('SET', KEYS[1], 's:' .. sha .. ':0:' .. staged, 'KEEPTTL', 'XX') return 1 end
return 0
`);

/** How long a claim protects a command being handled before another worker may take it over. */
const LEASE_MS_DEFAULT = 10_000;

/**
 * One answer per command_id: the boundary claims each command_id with the hash of its payload,
 * stages its decision before publishing it, and marks it answered once published. Whoever takes
 * over a claim publishes the staged decision again rather than deciding anew, so a command never
 * gets two different answers (a second decision could differ: a deadline or a rate window passes).
 * Claims and stages are durable (LuaScript.runDurable), so a failover never takes back a decision
 * that went out; marking a command answered is not (losing it publishes the staged decision again).
 */
export class CommandClaims {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keyspace,
    /** How long a claim protects a command being handled before another worker may take it over. */
    private readonly leaseMs = LEASE_MS_DEFAULT,
  ) {}

  /** Claims `commandId` of `tenant` and `runId` for `payloadSha256`, remembered for `ttlMs`, and reads the run. */
  async claim(tenant: string, runId: string, commandId: string, payloadSha256: string, ttlMs: number): Promise<CommandClaim> {
    const ttl = Math.max(1, Math.ceil(ttlMs));
    const { claim, run } = this.keysOf(tenant, runId, commandId);
    const keys = run === undefined ? [claim] : [claim, run];
    const [kind, decision, record] = (await CLAIM.runDurable(
      this.redis,
      keys.length,
      ...keys,
      payloadSha256,
      String(ttl),
      String(this.leaseMs),
    )) as [string, string, string];
    const stored = record === '' ? null : record;
    if (kind === 'staged') return { kind, decision, run: stored };
    return { kind: kind as Exclude<CommandClaim['kind'], 'staged'>, run: stored };
  }

  /**
   * Records the decision (what will be published) of a command this worker claimed; false when
   * another worker's decision was staged first (that one is the command's, and that worker
   * publishes it). `ttlMs` as for `claim`, should the claim have to be made again.
   */
  async stage(tenant: string, runId: string, commandId: string, payloadSha256: string, decision: string, ttlMs: number): Promise<boolean> {
    const ttl = Math.max(1, Math.ceil(ttlMs));
    return (
      ((await STAGE.runDurable(
        this.redis,
        1,
        this.keysOf(tenant, runId, commandId).claim,
        payloadSha256,
        decision,
        String(ttl),
        String(this.leaseMs),
      )) as number) === 1
    );
  }

  /** Marks the command handled: its decision is published, so a later copy gets nothing. */
  async answered(tenant: string, runId: string, commandId: string, payloadSha256: string): Promise<void> {
    await ANSWERED.run(this.redis, 1, this.keysOf(tenant, runId, commandId).claim, `a:${payloadSha256}:0`);
  }

  /**
   * After a handling failed: a claim not yet decided is given up, so the retry claims it `first`
   * at once; a staged decision is kept and its lease ended, so the retry publishes it. An answered
   * claim is never touched.
   */
  async release(tenant: string, runId: string, commandId: string, payloadSha256: string): Promise<void> {
    await RELEASE.run(this.redis, 1, this.keysOf(tenant, runId, commandId).claim, payloadSha256);
  }

  /**
   * The claim's key, and the run's when the id can name a run. Tenant and run id are
   * length-prefixed, so no two (tenant, run, command) triples hash alike, whatever they hold. A run
   * id that cannot name a run tags the claim with its hash, keeping a hostile id out of the key.
   */
  private keysOf(tenant: string, runId: string, commandId: string): { claim: string; run: string | undefined } {
    const hash = createHash('sha256').update(`${tenant.length}:${tenant}${runId.length}:${runId}`).update(commandId).digest('hex');
    if (RUN_ID_PATTERN.test(runId)) return { claim: this.keys.commandClaim(runId, hash), run: this.keys.run(runId) };
    return { claim: this.keys.commandClaim(createHash('sha256').update(runId).digest('hex'), hash), run: undefined };
  }
}
