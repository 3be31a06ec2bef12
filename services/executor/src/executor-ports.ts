import type { ToolImplementation } from '@gatehouse/contracts';
import type {
  AnswerScanVerdict,
  EventByRole,
  ExecutionOrder,
  OutboundRecord,
  PublishCondition,
  RecordHeaders,
  ToolResult,
  TopicRole,
} from '@gatehouse/events';
import type {
  ApprovalRecord,
  Claim,
  ClaimTerms,
  Proposal,
  Run,
  SlotScope,
  Staging,
  StopRenewing,
  StoredProposal,
  Verdict,
} from '@gatehouse/state';
import type { Credential } from './call-credentials.js';

// The stores the executor works with, as the executor needs them: each port names what it calls and
// what the answers mean here. The @gatehouse/state class named beside each fits it; unit tests hand
// in-memory fakes instead.

/**
 * Port: the claim ledger (`ClaimLedger`) — a command's claim and a write's idempotency key alike.
 * Each operation is atomic; only the owner that holds an entry in flight can stage, settle, renew or
 * give it back.
 */
export interface LedgerEntries {
  /** `commandId` names the command the key is claimed for, so a copy of that same command can tell it is waiting on itself. */
  claim(key: string, argumentsSha256: string, owner: string, leaseMs: number, commandId?: string): Promise<Claim>;
  /** Claims the entry, waiting while another live owner holds it, until `deadline` (ms since the epoch). */
  claimWhenFree(key: string, argumentsSha256: string, owner: string, leaseMs: number, deadline: number, commandId?: string): Promise<Claim>;
  /**
   * Keeps the answer about to go out with the entry; `taken` when this owner no longer holds it (or
   * it is settled). An entry Redis lost is made again from `terms`, held by this owner.
   */
  stage(key: string, owner: string, answer: string, terms: ClaimTerms): Promise<Staging>;
  /** The final state and answer; false when this owner no longer holds the entry. */
  settle(key: string, owner: string, verdict: Verdict, answer: string): Promise<boolean>;
  /** Extends a held entry's lease; false when this owner lost it. */
  renew(key: string, owner: string, leaseMs: number): Promise<boolean>;
  /** Renews a held entry's lease every third of its length until stopped. */
  keep(key: string, owner: string, leaseMs: number): StopRenewing;
  /** Gives a held entry back: with nothing staged, the next claim of it starts afresh. */
  giveBack(key: string, owner: string): Promise<boolean>;
}

/** Port: approvals by id (`ApprovalStore`); one is consumed by at most one idempotency key. */
export interface ApprovalRecords {
  get(approvalId: string): Promise<{ readonly record: ApprovalRecord; readonly consumedBy: string | null } | undefined>;
  /** The same key may consume again; another key finds it `already_consumed`. */
  consume(approvalId: string, by: string): Promise<'consumed' | 'already_consumed' | 'missing'>;
}

/** Port: proposals by id (`ProposalStore`); one is consumed by at most one idempotency key, and reopened by it. */
export interface ProposalRecords {
  get(proposalId: string): Promise<StoredProposal | undefined>;
  /** Stores a preview's proposal (written once). */
  save(proposal: Proposal): Promise<void>;
  consume(proposalId: string, by: string): Promise<'consumed' | 'already_consumed' | 'missing'>;
  /** Reopens a proposal `by` consumed but could not apply. */
  release(proposalId: string, by: string): Promise<boolean>;
}

/** Port: runs by id, whatever their state (`RunRegistry`). */
export interface RunLookup {
  get(runId: string): Promise<Run | undefined>;
}

/** Port: the tenant and run concurrency slots, leases shared by every executor (`SlotPool`). */
export interface SlotLeases {
  /** Takes one slot of every scope, waiting until `deadline`; false when none freed up in time. */
  acquire(scopes: readonly SlotScope[], leaseId: string, leaseMs: number, deadline: number): Promise<boolean>;
  /** Renews the slots' lease every third of its length until stopped. */
  keep(scopes: readonly SlotScope[], leaseId: string, leaseMs: number): StopRenewing;
  release(scopes: readonly SlotScope[], leaseId: string): Promise<void>;
}

/** Port: one writer per resource, on a lease (`ResourceLock`). */
export interface ResourceLocks {
  /** Takes the resource's lock, waiting until `deadline`; false when it stayed busy. */
  lock(resource: string, token: string, leaseMs: number, deadline: number): Promise<boolean>;
  /** Renews the lock's lease every third of its length until stopped. */
  keep(resource: string, token: string, leaseMs: number): StopRenewing;
  unlock(resource: string, token: string): Promise<boolean>;
}

/**
 * Port: what the results topic holds (`AnswerScan`), asked before an answer another owner staged is
 * published again: `published` when a trusted record of it is there already.
 */
export interface AnswerLog {
  published(key: string, result: ToolResult, headers?: RecordHeaders): Promise<AnswerScanVerdict>;
}

/** Port: the topics the executor writes (`EventPublisher`): results, operator handoffs, and dead letters as they came. */
export interface EventSink {
  /** `holds`: asked inside the publisher's transaction, after the record is in the log; the record commits only if it holds. */
  publish<R extends TopicRole>(
    role: R,
    key: string,
    event: EventByRole[R],
    headers?: RecordHeaders,
    holds?: PublishCondition,
  ): Promise<void>;
  sendRaw(topic: string, messages: OutboundRecord[]): Promise<void>;
}

/**
 * Port: the time the executor decides by (`ReferenceClock`, Redis' clock), so a deadline, an expiry
 * or an assertion's lifetime means the same here as where it was set and where it is checked, and
 * how this machine's clock reads a moment of it (for waits it times itself).
 */
export interface DecisionClock {
  now(): number;
  local(at: number): number;
}

/** Port: what handlers present to their systems of record (`CallCredentials`). */
export interface HandlerCredentials {
  forRead(order: ExecutionOrder, implementation: ToolImplementation): Credential;
  forWrite(order: ExecutionOrder, implementation: ToolImplementation, args: unknown): Credential;
  forStatus(order: ExecutionOrder, implementation: ToolImplementation): Credential;
}

/** What a write's own key records of its answer: staged beside the command's claim, settled before the answer goes out. */
interface KeyedAnswer {
  readonly stage: () => Promise<unknown>;
  readonly settle: () => Promise<unknown>;
}

/** Publishes a command's one answer, staged with its claim first (see `commandAnswer`). */
export interface Answer {
  (result: ToolResult, keyed?: KeyedAnswer): Promise<void>;
  /** Renews this delivery's claim of the command: false once another owner has taken the command over. */
  readonly holdsCommand: () => Promise<boolean>;
}
