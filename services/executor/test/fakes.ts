// In-memory fakes of the executor's ports (src/executor-ports.ts), with the semantics of the Redis
// scripts they stand for, and a small world to run writes and reads in: one active run, one open
// proposal, its approval, and a write whose system of record the test scripts.
import { Catalog, defineTool, implement, sha256Hex } from '@gatehouse/contracts';
import type { JSONSchema, StatusAnswer } from '@gatehouse/contracts';
import { claimWhenFree, keepRenewing } from '@gatehouse/state';
import type { ApprovalRecord, Claim, ClaimTerms, Proposal, Run, SlotScope, Staging, StopRenewing, StoredProposal } from '@gatehouse/state';
import type { AnswerScanVerdict, ExecutionOrder, OutboundRecord, RecordHeaders, ToolResult, TopicRole } from '@gatehouse/events';
import { createLogger, GatehouseMetrics } from '@gatehouse/telemetry';
import type {
  Answer,
  AnswerLog,
  ApprovalRecords,
  EventSink,
  HandlerCredentials,
  LedgerEntries,
  ProposalRecords,
  ResourceLocks,
  RunLookup,
  SlotLeases,
} from '../src/executor-ports.js';
import type { WritePathDeps } from '../src/keyed-write.js';

interface KeyRecord {
  state: 'in_flight' | 'succeeded' | 'failed' | 'unknown';
  arguments_sha256: string;
  owner: string;
  lease_until: number;
  outcome: string | null;
  command_id: string;
  staged?: string;
  previous_owner?: string;
}

/** `ClaimLedger`'s scripts over a Map; leases judged by Date.now(). */
class FakeLedgerEntries implements LedgerEntries {
  readonly records = new Map<string, KeyRecord>();
  /** What was asked, in order: `claim key`, `settle key state`, `give_back key`… */
  readonly calls: string[] = [];

  /** A record as another owner left it. */
  seed(key: string, record: Partial<KeyRecord> & Pick<KeyRecord, 'state' | 'arguments_sha256'>): void {
    this.records.set(key, { owner: 'other-executor/0', lease_until: 0, outcome: null, command_id: '', ...record });
  }

  claim(key: string, argumentsSha256: string, owner: string, leaseMs: number, commandId = ''): Promise<Claim> {
    this.calls.push(`claim ${key}`);
    const now = Date.now();
    const rec = this.records.get(key);
    if (rec === undefined) {
      this.records.set(key, {
        state: 'in_flight',
        arguments_sha256: argumentsSha256,
        owner,
        lease_until: now + leaseMs,
        outcome: null,
        command_id: commandId,
      });
      return Promise.resolve({ kind: 'claimed' });
    }
    if (rec.arguments_sha256 !== argumentsSha256) return Promise.resolve({ kind: 'reused' });
    if (rec.state === 'succeeded' || rec.state === 'failed')
      return Promise.resolve({ kind: 'settled', verdict: rec.state, answer: rec.outcome ?? '' });
    if (rec.state === 'unknown') return Promise.resolve({ kind: 'unknown', answer: rec.outcome ?? '' });
    if (rec.owner === owner) {
      rec.lease_until = now + leaseMs;
      return Promise.resolve({ kind: 'claimed' });
    }
    const left = rec.lease_until - now;
    if (left > 0) return Promise.resolve({ kind: 'in_progress', owner: rec.owner, leaseLeftMs: left, commandId: rec.command_id });
    const previousOwner = rec.owner;
    Object.assign(rec, { owner, lease_until: now + leaseMs, previous_owner: previousOwner });
    return Promise.resolve(
      rec.staged === undefined ? { kind: 'orphaned', previousOwner } : { kind: 'orphaned', previousOwner, staged: rec.staged },
    );
  }

  settle(key: string, owner: string, state: 'succeeded' | 'failed' | 'unknown', outcome: string): Promise<boolean> {
    this.calls.push(`settle ${key} ${state}`);
    const rec = this.held(key, owner);
    if (rec === undefined) return Promise.resolve(false);
    Object.assign(rec, { state, outcome, lease_until: 0 });
    delete rec.staged;
    return Promise.resolve(true);
  }

  stage(key: string, owner: string, outcome: string, terms: ClaimTerms): Promise<Staging> {
    this.calls.push(`stage ${key}`);
    if (!this.records.has(key)) {
      // Redis lost it: made again, in flight under this owner, with the answer staged.
      this.records.set(key, {
        state: 'in_flight',
        arguments_sha256: terms.argumentsSha256,
        owner,
        outcome: null,
        lease_until: Date.now() + terms.leaseMs,
        command_id: terms.commandId,
        staged: outcome,
      });
      return Promise.resolve('staged');
    }
    const rec = this.held(key, owner);
    if (rec === undefined) return Promise.resolve('taken');
    rec.staged = outcome;
    return Promise.resolve('staged');
  }

  claimWhenFree(key: string, argumentsSha256: string, owner: string, leaseMs: number, deadline: number, commandId = ''): Promise<Claim> {
    return claimWhenFree(() => this.claim(key, argumentsSha256, owner, leaseMs, commandId), deadline);
  }

  renew(key: string, owner: string, leaseMs: number): Promise<boolean> {
    const rec = this.held(key, owner);
    if (rec !== undefined) rec.lease_until = Date.now() + leaseMs;
    return Promise.resolve(rec !== undefined);
  }

  keep(key: string, owner: string, leaseMs: number): StopRenewing {
    return keepRenewing(() => this.renew(key, owner, leaseMs), leaseMs);
  }

  giveBack(key: string, owner: string): Promise<boolean> {
    this.calls.push(`give_back ${key}`);
    const rec = this.held(key, owner);
    if (rec === undefined) return Promise.resolve(false);
    // A staged answer is kept, its lease ended; an entry with nothing staged starts afresh.
    if (rec.staged === undefined) this.records.delete(key);
    else rec.lease_until = 0;
    return Promise.resolve(true);
  }

  private held(key: string, owner: string): KeyRecord | undefined {
    const rec = this.records.get(key);
    return rec?.state === 'in_flight' && rec.owner === owner ? rec : undefined;
  }
}

/** `ApprovalStore` over a Map: consumed by one key at most. */
class FakeApprovals implements ApprovalRecords {
  readonly records = new Map<string, { record: ApprovalRecord; consumedBy: string | null }>();
  get(approvalId: string) {
    const found = this.records.get(approvalId);
    return Promise.resolve(found === undefined ? undefined : { ...found });
  }
  consume(approvalId: string, by: string): Promise<'consumed' | 'already_consumed' | 'missing'> {
    const found = this.records.get(approvalId);
    if (found === undefined) return Promise.resolve('missing');
    if (found.consumedBy !== null) return Promise.resolve(found.consumedBy === by ? 'consumed' : 'already_consumed');
    found.consumedBy = by;
    return Promise.resolve('consumed');
  }
}

/** `ProposalStore` over a Map: consumed by one key at most, reopened only by it. */
class FakeProposals implements ProposalRecords {
  readonly records = new Map<string, { -readonly [K in keyof StoredProposal]: StoredProposal[K] }>();
  get(proposalId: string): Promise<StoredProposal | undefined> {
    const found = this.records.get(proposalId);
    return Promise.resolve(found === undefined ? undefined : { ...found });
  }
  save(proposal: Proposal): Promise<void> {
    if (this.records.has(proposal.proposal_id)) return Promise.reject(new Error(`proposal ${proposal.proposal_id} already exists`));
    this.records.set(proposal.proposal_id, { proposal, state: 'open', consumed_by: null });
    return Promise.resolve();
  }
  consume(proposalId: string, by: string): Promise<'consumed' | 'already_consumed' | 'missing'> {
    const found = this.records.get(proposalId);
    if (found === undefined) return Promise.resolve('missing');
    if (found.state !== 'open') return Promise.resolve(found.consumed_by === by ? 'consumed' : 'already_consumed');
    Object.assign(found, { state: 'consumed', consumed_by: by });
    return Promise.resolve('consumed');
  }
  release(proposalId: string, by: string): Promise<boolean> {
    const found = this.records.get(proposalId);
    if (found?.consumed_by !== by) return Promise.resolve(false);
    Object.assign(found, { state: 'open', consumed_by: null });
    return Promise.resolve(true);
  }
}

/** `SlotPool` that grants every slot while `free`, or none (as if none freed up before the deadline). */
class FakeSlots implements SlotLeases {
  free = true;
  readonly held = new Map<string, readonly SlotScope[]>();
  readonly released: string[] = [];
  /** The deadline of each acquire, as this machine's clock reads it. */
  readonly deadlines: number[] = [];
  /** Runs when a slot is asked for: what happens meanwhile elsewhere (another owner taking the key over). */
  onAcquire: () => void = () => undefined;
  acquire(scopes: readonly SlotScope[], leaseId: string, _leaseMs: number, deadline: number): Promise<boolean> {
    this.deadlines.push(deadline);
    this.onAcquire();
    if (this.free) this.held.set(leaseId, scopes);
    return Promise.resolve(this.free);
  }
  keep(): StopRenewing {
    return () => undefined;
  }
  release(_scopes: readonly SlotScope[], leaseId: string): Promise<void> {
    this.held.delete(leaseId);
    this.released.push(leaseId);
    return Promise.resolve();
  }
}

/** `ResourceLock` that refuses a lock another token holds at once (as if it stayed busy until the deadline). */
class FakeLocks implements ResourceLocks {
  readonly holders = new Map<string, string>();
  readonly taken: string[] = [];
  lock(resource: string, token: string): Promise<boolean> {
    const holder = this.holders.get(resource);
    if (holder !== undefined && holder !== token) return Promise.resolve(false);
    this.holders.set(resource, token);
    this.taken.push(resource);
    return Promise.resolve(true);
  }
  keep(): StopRenewing {
    return () => undefined;
  }
  unlock(resource: string, token: string): Promise<boolean> {
    if (this.holders.get(resource) !== token) return Promise.resolve(false);
    this.holders.delete(resource);
    return Promise.resolve(true);
  }
}

interface Published {
  readonly role: TopicRole;
  readonly key: string;
  readonly event: unknown;
  readonly headers: RecordHeaders | undefined;
}

/** `EventPublisher` that keeps what it was given. */
class FakeEventSink implements EventSink {
  readonly published: Published[] = [];
  readonly raw: { readonly topic: string; readonly messages: OutboundRecord[] }[] = [];
  publish(role: TopicRole, key: string, event: unknown, headers?: RecordHeaders): Promise<void> {
    this.published.push({ role, key, event, headers });
    return Promise.resolve();
  }
  sendRaw(topic: string, messages: OutboundRecord[]): Promise<void> {
    this.raw.push({ topic, messages });
    return Promise.resolve();
  }
  of(role: TopicRole): unknown[] {
    return this.published.filter((p) => p.role === role).map((p) => p.event);
  }
}

/**
 * `AnswerScan` over what a FakeEventSink was given (the results topic): `published` once this answer
 * (its command, status and completion time) was published, `absent` before. `asked` counts the questions.
 */
export function answersOf(sink: FakeEventSink): AnswerLog & { asked: number } {
  return {
    asked: 0,
    published(_key: string, result: ToolResult): Promise<AnswerScanVerdict> {
      this.asked += 1;
      const same = (r: ToolResult): boolean =>
        r.command_id === result.command_id && r.status === result.status && Number(r.completed_at) === Number(result.completed_at);
      const out = sink.of('results').some((r) => same(r as ToolResult));
      return Promise.resolve(out ? 'published' : 'absent');
    },
  };
}

/** Credentials that name the call they were minted for, so a test sees which one a handler or status query got. */
const credentials: HandlerCredentials = {
  forRead: () => () => Promise.resolve('read-credential'),
  forWrite: () => () => Promise.resolve('write-credential'),
  forStatus: () => () => Promise.resolve('status-credential'),
};

// --- The tools -------------------------------------------------------------------------------

/** A closed object schema (the catalog lints open ones). */
const closed = <const P extends Readonly<Record<string, JSONSchema>>, const R extends readonly (keyof P & string)[]>(
  properties: P,
  required: R,
) => ({ type: 'object', additionalProperties: false, required, properties }) as const;

/** A commit whose proposal names a ticket and its new status; the system of record answers a change id. */
export const updateTicket = defineTool({
  name: 'update_ticket',
  version: 1,
  description: 'Applies a ticket change proposal.',
  effect: 'write',
  retry: 'idempotent',
  approval: 'ticket',
  input: closed({ proposal_id: { type: 'string' } }, ['proposal_id']),
  proposal: closed({ ticket_id: { type: 'string' }, status: { type: 'string', enum: ['open', 'closed'] } }, ['ticket_id', 'status']),
  output: closed({ change_id: { type: 'string' } }, ['change_id']),
  timeoutMs: 150,
  cancel: 'none',
  maxResultBytes: 256,
  previewedBy: 'preview_ticket.v1',
});
/** The same commit to a system of record that honours the idempotency key (a resend under it applies once). */
export const updateTicketKeyed = defineTool({
  name: 'update_ticket_keyed',
  version: 1,
  description: 'Applies a ticket change proposal, once per key.',
  effect: 'write',
  retry: 'idempotent',
  approval: 'ticket',
  input: closed({ proposal_id: { type: 'string' } }, ['proposal_id']),
  proposal: closed({ ticket_id: { type: 'string' }, status: { type: 'string', enum: ['open', 'closed'] } }, ['ticket_id', 'status']),
  output: closed({ change_id: { type: 'string' } }, ['change_id']),
  timeoutMs: 150,
  cancel: 'none',
  maxResultBytes: 256,
  honoursIdempotencyKey: true,
  previewedBy: 'preview_ticket_keyed.v1',
});
/** A read. */
export const readTicket = defineTool({
  name: 'read_ticket',
  version: 1,
  description: 'Reads a ticket.',
  effect: 'read',
  retry: 'never',
  input: closed({ ticket_id: { type: 'string' } }, ['ticket_id']),
  output: closed({ status: { type: 'string' } }, ['status']),
  timeoutMs: 150,
  cancel: 'none',
  maxResultBytes: 256,
});
const previewOf = (name: string, commits: string) =>
  defineTool({
    name,
    version: 1,
    description: 'Previews a ticket change.',
    effect: 'read',
    retry: 'safe',
    commits,
    input: closed({ ticket_id: { type: 'string' } }, ['ticket_id']),
    output: closed({ proposal_id: { type: 'string' }, expires_at: { type: 'string' }, effect: { type: 'string' } }, [
      'proposal_id',
      'expires_at',
      'effect',
    ]),
    timeoutMs: 150,
    cancel: 'none',
    maxResultBytes: 256,
  });
const catalog = Catalog.load([
  updateTicket,
  updateTicketKeyed,
  readTicket,
  previewOf('preview_ticket', 'update_ticket.v1'),
  previewOf('preview_ticket_keyed', 'update_ticket_keyed.v1'),
]);

/** What a test's system of record does: each handler call and status ask is recorded and answered by the script. */
export interface SystemOfRecord {
  run: (args: unknown) => Promise<{ change_id: string } | Record<string, unknown>>;
  /** Absent: the tool has no status query. */
  status?: (key: string) => Promise<StatusAnswer>;
  readonly runs: unknown[];
  readonly asks: string[];
  readonly credentialsSeen: string[];
}

export function systemOfRecord(): SystemOfRecord {
  return { run: () => Promise.resolve({ change_id: 'chg-1' }), runs: [], asks: [], credentialsSeen: [] };
}

/** The write's implementation over the test's system of record, locking `ticket:<id>`. */
export function ticketWrite(sor: SystemOfRecord, contract: typeof updateTicket | typeof updateTicketKeyed = updateTicket) {
  return implement(contract, {
    run: async (args, context) => {
      sor.runs.push(args);
      sor.credentialsSeen.push(await context.credential());
      return sor.run(args);
    },
    status: async (key, context) => {
      sor.asks.push(key);
      sor.credentialsSeen.push(await context.credential());
      if (sor.status === undefined) throw new Error('no status query scripted');
      return sor.status(key);
    },
    resourceOf: (args) => `ticket:${(args as unknown as { ticket_id: string }).ticket_id}`,
  });
}

// --- The world -------------------------------------------------------------------------------

const ARGS = '{"status":"closed","ticket_id":"T-1"}';
const SHA = sha256Hex(ARGS);
export const KEY = 'run_1:p_1:update';

function run(overrides: Partial<Run> = {}): Run {
  return {
    run_id: 'run_1',
    tenant: 'acme',
    principal: 'agent:bot',
    role: 'agent',
    capabilities: ['update_ticket.v1'],
    environment: 'test',
    created_at: Date.now() - 1000,
    expires_at: Date.now() + 3_600_000,
    stopped_at: null,
    ...overrides,
  };
}

function proposal(overrides: Partial<Proposal> = {}): Proposal {
  return {
    proposal_id: 'p_1',
    tool: 'update_ticket.v1',
    arguments: ARGS,
    arguments_sha256: SHA,
    target: { type: 'ticket', id: 'T-1', version: 3 },
    effect: 'Close T-1',
    diff: { changes: [], recipients: [], amount: null, affected_records: 1, irreversible: [] },
    environment: 'test',
    run_id: 'run_1',
    tenant: 'acme',
    principal: 'agent:bot',
    created_at: Date.now() - 1000,
    expires_at: Date.now() + 600_000,
    ...overrides,
  };
}

function approval(overrides: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    approval_id: 'apr_1',
    proposal_id: 'p_1',
    arguments_sha256: SHA,
    target_type: 'ticket',
    target_id: 'T-1',
    target_version: 3,
    approved_by: 'lead@acme.example',
    approver_roles: ['lead'],
    required_role: 'lead',
    approved_at: Date.now() - 500,
    expires_at: Date.now() + 600_000,
    ...overrides,
  };
}

export function order(overrides: Partial<ExecutionOrder> = {}): ExecutionOrder {
  return {
    schema_version: 1,
    order_id: 'ord-1',
    command_id: 'cmd-1',
    run_id: 'run_1',
    tenant: 'acme',
    principal: 'agent:bot',
    environment: 'test',
    tool: 'update_ticket.v1',
    effect: 'write',
    arguments: ARGS,
    arguments_sha256: SHA,
    proposal_id: 'p_1',
    approval: {
      approval_id: 'apr_1',
      approved_by: 'lead@acme.example',
      approved_at: Date.now() - 500,
      expires_at: Date.now() + 600_000,
      arguments_sha256: SHA,
      target_version: 3,
    },
    idempotency_key: KEY,
    deadline_at: null,
    issued_at: Date.now(),
    on_behalf_of: null,
    ...overrides,
  };
}

interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly [field: string]: unknown;
}

/** The ports, their contents, and what came out: one per test. */
export interface World {
  readonly ledger: FakeLedgerEntries;
  readonly approvals: FakeApprovals;
  readonly proposals: FakeProposals;
  readonly runs: Map<string, Run>;
  readonly slots: FakeSlots;
  readonly locks: FakeLocks;
  readonly events: FakeEventSink;
  readonly metrics: GatehouseMetrics;
  readonly lines: LogLine[];
  readonly logger: ReturnType<typeof createLogger>;
  /** The time the executor decides by: this machine's, `skewMs` ahead of it (negative: behind). */
  readonly clock: SkewedClock;
}

/** A reference clock `skewMs` ahead of this machine's (ReferenceClock's offset). */
class SkewedClock {
  skewMs = 0;
  now(): number {
    return Date.now() + this.skewMs;
  }
  local(at: number): number {
    return at - this.skewMs;
  }
}

export function world(): World {
  const lines: LogLine[] = [];
  const w: World = {
    ledger: new FakeLedgerEntries(),
    approvals: new FakeApprovals(),
    proposals: new FakeProposals(),
    runs: new Map([['run_1', run()]]),
    slots: new FakeSlots(),
    locks: new FakeLocks(),
    clock: new SkewedClock(),
    events: new FakeEventSink(),
    metrics: new GatehouseMetrics({ tools: catalog.tools() }),
    lines,
    logger: createLogger('executor-test', {
      level: 'debug',
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
    }),
  };
  w.approvals.records.set('apr_1', { record: approval(), consumedBy: null });
  w.proposals.records.set('p_1', { proposal: proposal(), state: 'open', consumed_by: null });
  return w;
}

const LEASE_MS = 30;

export function writeDeps(w: World): WritePathDeps {
  const runs: RunLookup = { get: (id) => Promise.resolve(w.runs.get(id)) };
  return {
    catalog,
    ledger: w.ledger,
    proposals: w.proposals,
    approvals: w.approvals,
    runs,
    slots: w.slots,
    locks: w.locks,
    limits: { tenantDefault: 4, tenants: {}, run: 2 },
    publisher: w.events,
    executorId: 'executor-1',
    leaseMs: LEASE_MS,
    logger: w.logger,
    metrics: w.metrics,
    credentials,
    clock: w.clock,
  };
}

/** An `answer` of `publish`, for a command this delivery still holds unless `holdsCommand` says otherwise. */
export function answerOf(publish: (result: ToolResult, keyed?: Parameters<Answer>[1]) => Promise<void>, holdsCommand = true): Answer {
  return Object.assign(publish, { holdsCommand: () => Promise.resolve(holdsCommand) });
}

/** An `answer` as the command's: the write's key staged and settled, then the result kept. */
export function answers(holdsCommand = true): { readonly results: ToolResult[]; readonly answer: Answer } {
  const results: ToolResult[] = [];
  return {
    results,
    answer: answerOf(async (result, keyed) => {
      await keyed?.stage();
      await keyed?.settle();
      results.push(result);
    }, holdsCommand),
  };
}
