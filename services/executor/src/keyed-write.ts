import { sha256Hex } from '@gatehouse/contracts';
import type { Catalog, ExecutionContext, ToolError, ToolImplementation } from '@gatehouse/contracts';
import { errorResult } from '@gatehouse/events';
import type { ExecutionOrder, RecordHeaders, ResultAddress, ToolResult } from '@gatehouse/events';
import type { ClaimTerms } from '@gatehouse/state';
import { traceIdOf } from '@gatehouse/telemetry';
import type { GatehouseMetrics, Logger, Span } from '@gatehouse/telemetry';
import { ownerToken } from './claim-wait.js';
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
 * What a write's key keeps once the write is answered: the answer's state, or nothing — the key
 * given back, so that an identical call runs (nothing ran, or the system of record shows nothing was
 * applied and says an identical call may succeed).
 */
type KeyFate = 'succeeded' | 'failed' | 'unknown' | 'given_back';

/** A write's answer, what its key keeps of it, and what to log once it is out. */
export interface Settlement {
  readonly result: ToolResult;
  readonly key: KeyFate;
  /** Nothing was applied: the proposal is reopened before the answer goes out. */
  readonly reopensProposal: boolean;
  readonly afterwards?: (() => void) | undefined;
}

/** A write's operation id, derived from its idempotency key: every owner of the key names it alike. */
export function writeOperationId(idempotencyKey: string): string {
  return `op_${sha256Hex(idempotencyKey).slice(0, 24)}`;
}

export function keyedWrite(
  order: ExecutionOrder,
  implementation: ToolImplementation,
  key: string,
  record: WriteRecord,
  deps: WritePathDeps,
  answer: Answer,
): KeyedWrite {
  const tool = implementation.contract;
  // The same for whichever executor ends up answering: a repeated answer is the same answer.
  const operationId = writeOperationId(key);
  return {
    order,
    implementation,
    key,
    owner: ownerToken(deps.executorId),
    operationId,
    // As this machine's clock reads it: every wait of the write is timed by this machine.
    deadline: order.deadline_at === null ? Date.now() + tool.timeoutMs * 4 : deps.clock.local(order.deadline_at),
    address: addressOf(order),
    logContext: {
      command_id: order.command_id,
      run_id: order.run_id,
      tenant: order.tenant,
      tool: order.tool,
      arguments_sha256: order.arguments_sha256,
      trace_id: traceIdOf(record.headers),
    },
    record,
    statusContext: { ...orderContext(order, operationId, key), credential: deps.credentials.forStatus(order, implementation) },
    deps,
    answer,
  };
}

/** What a handler of `order` knows about its call, but for its signal and credential (which each call path adds). */
export function orderContext(
  order: ExecutionOrder,
  operationId: string,
  idempotencyKey: string | null,
): Omit<ExecutionContext, 'signal' | 'credential'> {
  return {
    commandId: order.command_id,
    operationId,
    runId: order.run_id,
    tenant: order.tenant,
    principal: order.principal,
    environment: order.environment,
    idempotencyKey,
    deadlineAt: order.deadline_at,
  };
}

/** The terms an order's keys are claimed on (its command's claim and its write's key alike). */
export function termsOf(order: ExecutionOrder, leaseMs: number): ClaimTerms {
  return { argumentsSha256: order.arguments_sha256, leaseMs, commandId: order.command_id };
}

export function addressOf(order: ExecutionOrder): ResultAddress {
  return { command_id: order.command_id, run_id: order.run_id, tenant: order.tenant, tool: order.tool };
}

/** A refusal of the write before anything ran: no operation, no duration. */
export function refusalOf(write: Pick<KeyedWrite, 'address' | 'order'>, error: ToolError): ToolResult {
  return errorResult(write.address, error, { argumentsSha256: write.order.arguments_sha256 });
}

/** What a result of the write's own run carries beside its answer. */
export function writeExtras(
  write: KeyedWrite,
  durationMs: number | null,
): { readonly operationId: string; readonly argumentsSha256: string; readonly durationMs: number | null } {
  return { operationId: write.operationId, argumentsSha256: write.order.arguments_sha256, durationMs };
}
