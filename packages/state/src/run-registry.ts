import type { Redis } from './redis-client.js';
import type { Keyspace } from './keyspace.js';
import { LuaScript } from './lua-script.js';

/** A run as trusted code registered it. Agents can neither create nor widen one. */
/** A person as their identity provider names them: the issuer and the subject there, with a display name. */
export interface PersonRef {
  readonly issuer: string;
  readonly subject: string;
  readonly name: string | null;
}

/** Who registered a run: an identity provider's client (client credentials), or the local control token. */
export interface Registrar {
  readonly issuer: string | null;
  readonly subject: string | null;
  /** The OAuth client (`azp` or `client_id`), or `control-token` for the local-development token. */
  readonly client_id: string;
}

export interface Run {
  readonly run_id: string;
  readonly tenant: string;
  /** The agent the run is: how logs and people name it (`agent:support-bot`). */
  readonly principal: string;
  /**
   * The person whose agent it is, named by the IdP. They may never approve the run's own writes
   * (SELF_APPROVAL). Absent on runs registered before people were recorded.
   */
  readonly on_behalf_of?: PersonRef | null;
  /** Who registered the run; absent on runs registered before it was recorded. */
  readonly registered_by?: Registrar | null;
  readonly role: string;
  /** Tool addresses (name.vN) the run may call. */
  readonly capabilities: readonly string[];
  readonly environment: string;
  readonly created_at: number;
  readonly expires_at: number;
  readonly stopped_at: number | null;
  /**
   * The public half of the run's own key (base64 SPKI DER, Ed25519): its commands prove the run with
   * the private half, which only the registering code was given. Absent on runs registered before
   * commands were proved, and on runs an MCP front door registered (their commands carry its proof).
   */
  readonly proof_key?: string | null;
}

/** How long a run's record outlives its expiry, so lookups can say "expired" and audits can read it. */
const KEEP_AFTER_EXPIRY_MS = 24 * 3600 * 1000;

// A script, not a plain GET, so every check of a run in one turn goes to Redis as one command.
// KEYS[1] the run record. Returns its JSON, or nil.
const GET = new LuaScript(`return redis.call('GET', KEYS[1])`);

// KEYS[1] the run record (JSON); ARGV[1] stopped_at (ms). Returns 1 stopped, 2 already stopped, 0 no record.
// Keeps the TTL.
const STOP = new LuaScript(`
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local run = cjson.decode(raw)
if run.stopped_at ~= cjson.null and run.stopped_at ~= nil then return 2 end
run.stopped_at = tonumber(ARGV[1])
redis.call('SET', KEYS[1], cjson.encode(run), 'KEEPTTL')
return 1
`);

// KEYS[1] the run record; ARGV[1] the new expiry (ms), ARGV[2] now (ms), ARGV[3] how long the record
// outlives its expiry (ms). Moves a run's expiry later, never earlier, and never for a stopped run.
// Returns 1 moved, 2 stopped, 3 already as late, 0 no record.
const EXTEND = new LuaScript(`
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local run = cjson.decode(raw)
if run.stopped_at ~= cjson.null and run.stopped_at ~= nil then return 2 end
local untilMs = tonumber(ARGV[1])
if untilMs <= run.expires_at then return 3 end
run.expires_at = untilMs
redis.call('SET', KEYS[1], cjson.encode(run), 'PX', math.max(1, untilMs - tonumber(ARGV[2]) + tonumber(ARGV[3])))
return 1
`);

/**
 * A stored run record. `STOP` re-encodes a run with Redis' cjson, which writes an empty array as
 * `{}`: a run granted no tools reads back with none, not with an object.
 */
export function parseRun(raw: string): Run {
  const run = JSON.parse(raw) as Run;
  return Array.isArray(run.capabilities) ? run : { ...run, capabilities: [] };
}

export class RunRegistry {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keyspace,
  ) {}

  /** Registers a run; false when the id is taken (a run is never overwritten: only stopped, or its expiry moved later). */
  async create(run: Run): Promise<boolean> {
    const ttl = Math.max(1, run.expires_at - Date.now() + KEEP_AFTER_EXPIRY_MS);
    const stored = await this.redis.set(this.keys.run(run.run_id), JSON.stringify(run), 'PX', ttl, 'NX');
    if (stored !== 'OK') return false;
    await this.redis.zadd(this.keys.runsOfTenant(run.tenant), run.expires_at, run.run_id);
    return true;
  }

  /** The run, whatever its state; callers check `isActive`. */
  async get(runId: string): Promise<Run | undefined> {
    const raw = (await GET.run(this.redis, 1, this.keys.run(runId))) as string | null;
    return raw === null ? undefined : parseRun(raw);
  }

  /** Runs of a tenant that have not expired. */
  async list(tenant: string, now = Date.now()): Promise<Run[]> {
    const ids = await this.redis.zrangebyscore(this.keys.runsOfTenant(tenant), now, '+inf');
    const runs = await Promise.all(ids.map((id) => this.get(id)));
    return runs.filter((r): r is Run => r !== undefined);
  }

  /** Stops a run: its future calls are refused; calls already accepted are not undone. */
  async stop(runId: string, now = Date.now()): Promise<'stopped' | 'already_stopped' | 'not_found'> {
    const result = (await STOP.run(this.redis, 1, this.keys.run(runId), String(now))) as number;
    return result === 1 ? 'stopped' : result === 2 ? 'already_stopped' : 'not_found';
  }

  /**
   * Moves a run's expiry later, to `until`: a run whose lifetime follows something outside it (a
   * person's sign-in session) lives on while that does. A stopped run stays stopped.
   */
  async extend(run: Run, until: number, now = Date.now()): Promise<'extended' | 'stopped' | 'unchanged' | 'not_found'> {
    const result = (await EXTEND.run(
      this.redis,
      1,
      this.keys.run(run.run_id),
      String(until),
      String(now),
      String(KEEP_AFTER_EXPIRY_MS),
    )) as number;
    if (result === 1) await this.redis.zadd(this.keys.runsOfTenant(run.tenant), until, run.run_id);
    return result === 1 ? 'extended' : result === 2 ? 'stopped' : result === 3 ? 'unchanged' : 'not_found';
  }
}

/** Whether a run may still make calls at `now`. */
export function isActive(run: Run, now = Date.now()): boolean {
  return run.stopped_at === null && run.expires_at > now;
}
