import type { Proposal } from '@gatehouse/contracts';
import type { Redis } from './redis-client.js';
import type { Keyspace } from './keyspace.js';
import { LuaScript } from './lua-script.js';

// A script, not a plain HMGET, so it rides the batch of script calls made in the same turn.
// KEYS[1] the proposal's hash. Returns [proposal JSON, state, consumed_by], each nil when unset.
const GET = new LuaScript(`return redis.call('HMGET', KEYS[1], 'proposal', 'state', 'consumed_by')`);

// Writes a proposal once, open, with its expiry: one script, so it rides the connection's
// auto-pipelining with every other call's commands (a MULTI/EXEC goes out on its own).
// KEYS[1] the proposal's hash; ARGV[1] the proposal (JSON), ARGV[2] its TTL (ms). Returns 1 written, 0 when it already existed.
const SAVE = new LuaScript(`
if redis.call('HSETNX', KEYS[1], 'proposal', ARGV[1]) == 0 then return 0 end
redis.call('HSETNX', KEYS[1], 'state', 'open')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`);

export type { Proposal } from '@gatehouse/contracts';

export type ProposalState = 'open' | 'consumed';

export interface StoredProposal {
  readonly proposal: Proposal;
  readonly state: ProposalState;
  readonly consumed_by: string | null;
}

/** How long a proposal's record outlives its expiry, so a late commit can be told PROPOSAL_EXPIRED, not NOT_FOUND. */
const KEEP_AFTER_EXPIRY_MS = 24 * 3600 * 1000;

// KEYS[1] the proposal's hash; ARGV[1] the consumer (an idempotency key). Returns 'consumed' (also when ARGV[1] had
// consumed it already), 'already_consumed' (another consumer has) or 'missing' (no record).
const CONSUME = new LuaScript(`
local rec = redis.call('HMGET', KEYS[1], 'state', 'consumed_by')
if not rec[1] then return 'missing' end
if rec[1] ~= 'open' then
  if rec[2] == ARGV[1] then return 'consumed' end
  return 'already_consumed'
end
redis.call('HSET', KEYS[1], 'state', 'consumed', 'consumed_by', ARGV[1])
return 'consumed'
`);

// KEYS[1] the proposal's hash; ARGV[1] the consumer. Re-opens the proposal; returns 1, or 0 when ARGV[1] is not its
// consumer (or there is no record).
const RELEASE = new LuaScript(`
if redis.call('HGET', KEYS[1], 'consumed_by') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', 'open', 'consumed_by', '')
return 1
`);

/** Proposals in Redis: written once, never edited; consumed at most once. */
export class ProposalStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keyspace,
  ) {}

  async save(proposal: Proposal): Promise<void> {
    const key = this.keys.proposal(proposal.proposal_id);
    const ttl = Math.max(1, proposal.expires_at - Date.now() + KEEP_AFTER_EXPIRY_MS);
    const written = (await SAVE.run(this.redis, 1, key, JSON.stringify(proposal), String(ttl))) as number;
    if (written !== 1) throw new Error(`proposal ${proposal.proposal_id} already exists`);
  }

  async get(proposalId: string): Promise<StoredProposal | undefined> {
    const [raw, state, consumedBy] = (await GET.run(this.redis, 1, this.keys.proposal(proposalId))) as [
      string | null,
      string | null,
      string | null,
    ];
    if (raw === null || raw === undefined) return undefined;
    return {
      proposal: JSON.parse(raw) as Proposal,
      state: state === 'consumed' ? 'consumed' : 'open',
      consumed_by: consumedBy === null || consumedBy === undefined || consumedBy === '' ? null : consumedBy,
    };
  }

  /**
   * Marks a proposal consumed by `by` (an idempotency key) if it is open; the same key may ask again,
   * no other key can. Durable: a consumption a failover could lose would let another key consume the
   * proposal again and apply it twice, so on a connection that requires replicas it answers only
   * once they hold it (else ReplicationUnconfirmed, and the caller runs nothing; the same key asks again).
   */
  async consume(proposalId: string, by: string): Promise<'consumed' | 'already_consumed' | 'missing'> {
    const reply = (await CONSUME.runDurable(this.redis, 1, this.keys.proposal(proposalId), by)) as string;
    return reply === 'consumed' ? 'consumed' : reply === 'missing' ? 'missing' : 'already_consumed';
  }

  /** Re-opens a proposal its consumer could not apply (a version conflict leaves it unconsumed). */
  async release(proposalId: string, by: string): Promise<boolean> {
    return (await RELEASE.run(this.redis, 1, this.keys.proposal(proposalId), by)) === 1;
  }
}
