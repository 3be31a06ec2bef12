import type { Catalog, ExecutionContext, ToolError, ToolImplementation } from '@gatehouse/contracts';
import type { ExecutionOrder, RecordHeaders, ResultAddress } from '@gatehouse/events';
import type { GatehouseMetrics, Logger, Span } from '@gatehouse/telemetry';
import type {
  Answer,
  ApprovalRecords,
  DecisionClock,
  EventSink,
  HandlerCredentials,
  LedgerEntries,
  ProposalRecords,
  ResourceLocks,
  RunLookup,
  SlotLeases,
} from './executor-ports.js';

// The shapes a write's path passes along (write-path.ts builds and settles them).

export interface SlotLimits {
  readonly tenantDefault: number;
  readonly tenants: Readonly<Record<string, number>>;
  readonly run: number;
}

export interface WritePathDeps {
  readonly catalog: Catalog;
  readonly ledger: LedgerEntries;
  readonly proposals: ProposalRecords;
  readonly approvals: ApprovalRecords;
  readonly runs: RunLookup;
  readonly slots: SlotLeases;
  readonly locks: ResourceLocks;
  readonly limits: SlotLimits;
  readonly publisher: Pick<EventSink, 'publish'>;
  readonly executorId: string;
  readonly leaseMs: number;
  readonly logger: Logger;
  readonly metrics: GatehouseMetrics;
  readonly credentials: HandlerCredentials;
  readonly clock: DecisionClock;
}

/** The record a write's order came in: `span`, the execution's, records how the write was answered. */
export interface WriteRecord {
  readonly headers: RecordHeaders | undefined;
  readonly origin: string;
  readonly span?: Span;
}

/** A write and its idempotency key, with what every step of its path names alike. */
export interface KeyedWrite {
  readonly order: ExecutionOrder;
  readonly implementation: ToolImplementation;
  /** The write's idempotency key (its entry in the claim ledger). */
  readonly key: string;
  /** This delivery's owner token for the key. */
  readonly owner: string;
  readonly operationId: string;
  /** Until when (this machine's clock) the write may wait for its key, its slots and its resource. */
  readonly deadline: number;
  readonly address: ResultAddress;
  readonly logContext: Readonly<Record<string, unknown>>;
  readonly record: WriteRecord;
  /** What a status query presents; the handler's own run gets a write's credential (see `runUnderSlots`). */
  readonly statusContext: Omit<ExecutionContext, 'signal'>;
  readonly deps: WritePathDeps;
  /** Stages, publishes and records this command's one answer. */
  readonly answer: Answer;
}

/**
 * What a step of the write path found, in terms of the write. Only write-path.ts turns it into an
 * answer and decides what the key keeps. `note` logs what happened once the answer is out.
 */
export type WriteOutcome =
  /** The key holds an answer already (settled, or handed to an operator): that answer; the key is not touched. */
  | { readonly kind: 'stored'; readonly answer: string }
  /** The key's previous owner staged its answer before it stopped: that answer, and the key settled with it. */
  | { readonly kind: 'staged'; readonly answer: string; readonly previousOwner: string }
  /** Refused at the key (other arguments under it, another command's write running under it): the key is another's. */
  | { readonly kind: 'refused_at_key'; readonly error: ToolError }
  /** Refused before anything ran or was consumed (no operation): the legitimate order under the key must still run. */
  | { readonly kind: 'refused'; readonly error: ToolError; readonly note?: (() => void) | undefined }
  /** The operation began, yet nothing was applied, and an identical call may succeed. */
  | {
      readonly kind: 'not_applied';
      readonly error: ToolError;
      readonly durationMs: number | null;
      /** Nothing was consumed for good either: the proposal is open again. */
      readonly reopensProposal: boolean;
      readonly note?: (() => void) | undefined;
    }
  /** Applied, with the answer checked against the contract (canonical JSON). */
  | { readonly kind: 'applied'; readonly result: string; readonly durationMs: number | null; readonly note?: (() => void) | undefined }
  /** Refused by the system of record for good, or applied with an answer that breaks the contract. */
  | {
      readonly kind: 'failed';
      readonly error: ToolError;
      readonly durationMs: number | null;
      readonly reopensProposal: boolean;
      readonly note?: (() => void) | undefined;
    }
  /** No one can tell whether it was applied: handed to an operator. */
  | { readonly kind: 'unknown'; readonly error: ToolError; readonly durationMs: number | null; readonly note?: (() => void) | undefined };
