import type { Redis } from './redis-client.js';
import type { Keyspace } from './keyspace.js';
import { LuaScript } from './lua-script.js';

// A script, not a plain HMGET, so it rides the batch of script calls made in the same turn.
// KEYS[1] the approval's hash. Returns [record JSON, consumed_by], each nil when unset.
const GET = new LuaScript(`return redis.call('HMGET', KEYS[1], 'record', 'consumed_by')`);

// Writes an approval record once, with its expiry: one script, so it rides the connection's
// auto-pipelining with every other call's commands (a MULTI/EXEC goes out on its own).
// KEYS[1] the approval's hash; ARGV[1] the record (JSON), ARGV[2] its TTL (ms). Returns 1 written, 0 when it already existed.
const SAVE = new LuaScript(`
if redis.call('HSETNX', KEYS[1], 'record', ARGV[1]) == 0 then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`);

/**
 * An approval as the approval service (or the policy table, for `allow`) granted it. The executor
 * trusts this record, not the grant copied into an ExecutionOrder: anyone who can write to a topic
 * could forge the latter.
 */
export interface ApprovalRecord {
  readonly approval_id: string;
  readonly proposal_id: string;
  readonly arguments_sha256: string;
  readonly target_type: string;
  readonly target_id: string;
  readonly target_version: number | null;
  /** An approver identity, or `policy:<rule id>` when the policy table allowed the call. */
  readonly approved_by: string;
  /** The approving person's issuer and subject at the identity provider; absent for a policy rule's grant. */
  readonly approver_issuer?: string | null;
  readonly approver_subject?: string | null;
  /** Roles the approver held when approving. */
  readonly approver_roles: readonly string[];
  /** Role the policy rule asked for; null for `allow`. */
  readonly required_role: string | null;
  readonly approved_at: number;
  readonly expires_at: number;
}

// KEYS[1] the approval's hash; ARGV[1] the consumer (an idempotency key). Returns 'consumed' (also when ARGV[1] had
// consumed it already), 'already_consumed' (another consumer has) or 'missing' (no record).
const CONSUME = new LuaScript(`
local raw = redis.call('HGET', KEYS[1], 'record')
if not raw then return 'missing' end
local by = redis.call('HGET', KEYS[1], 'consumed_by')
if by and by ~= '' then
  if by == ARGV[1] then return 'consumed' end
  return 'already_consumed'
end
redis.call('HSET', KEYS[1], 'consumed_by', ARGV[1])
return 'consumed'
`);

const KEEP_AFTER_EXPIRY_MS = 24 * 3600 * 1000;

/** Approvals in Redis: written once by the approver's side, consumed at most once by a commit. */
export class ApprovalStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keyspace,
  ) {}

  async save(record: ApprovalRecord): Promise<void> {
    const key = this.keys.approval(record.approval_id);
    const ttl = Math.max(1, record.expires_at - Date.now() + KEEP_AFTER_EXPIRY_MS);
    const written = (await SAVE.run(this.redis, 1, key, JSON.stringify(record), String(ttl))) as number;
    if (written !== 1) throw new Error(`approval ${record.approval_id} already exists`);
  }

  async get(approvalId: string): Promise<{ record: ApprovalRecord; consumedBy: string | null } | undefined> {
    const [raw, by] = (await GET.run(this.redis, 1, this.keys.approval(approvalId))) as [string | null, string | null];
    if (raw === null || raw === undefined) return undefined;
    return { record: JSON.parse(raw) as ApprovalRecord, consumedBy: by === null || by === undefined || by === '' ? null : by };
  }

  /**
   * Uses the approval for `by` (an idempotency key); the same key may ask again, no other key can.
   * Durable, as a proposal's consumption (`ProposalStore.consume`): a use a failover lost could be made again under another key.
   */
  async consume(approvalId: string, by: string): Promise<'consumed' | 'already_consumed' | 'missing'> {
    const reply = (await CONSUME.runDurable(this.redis, 1, this.keys.approval(approvalId), by)) as string;
    return reply === 'consumed' ? 'consumed' : reply === 'missing' ? 'missing' : 'already_consumed';
  }
}
