import { randomUUID } from 'node:crypto';
import { canonicalJson, isToolFailure, sha256Hex, toolError, ToolFailure } from '@gatehouse/contracts';
import type { Catalog, ExecutionContext, ToolError, ToolImplementation } from '@gatehouse/contracts';
import { errorResult, fromStoredOutcome, okResult, toStoredOutcome } from '@gatehouse/events';
import type { EventPublisher, ExecutionOrder, OperatorHandoff, ResultAddress, StoredOutcome, ToolResult } from '@gatehouse/events';
import type { ApprovalStore, IdempotencyStore, ProposalStore, ResourceLock, RunRegistry, SlotPool, SlotScope } from '@gatehouse/state';
import { traceIdOf } from '@gatehouse/telemetry';
import type { GatehouseMetrics, Logger, Span } from '@gatehouse/telemetry';
import type { IHeaders } from 'kafkajs';
import { authorize } from './approval-check.js';
import type { CallCredentials } from './call-credentials.js';
import { claimOrWait, keepLease } from './claim-wait.js';
import { storedArguments } from './stored-arguments.js';
import { runHandler } from './run-handler.js';
import { runStoppedError } from './run-state.js';
import { settleAmbiguous } from './status-protocol.js';


export interface SlotLimits {
  readonly tenantDefault: number;
  readonly tenants: Readonly<Record<string, number>>;
  readonly run: number;
}

export interface WritePathDeps {
  readonly catalog: Catalog;
  readonly idempotency: IdempotencyStore;
  readonly proposals: ProposalStore;
  readonly approvals: ApprovalStore;
  readonly runs: RunRegistry;
  readonly slots: SlotPool;
  readonly locks: ResourceLock;
  readonly limits: SlotLimits;
  readonly publisher: EventPublisher;
  readonly executorId: string;
  readonly leaseMs: number;
  readonly logger: Logger;
  readonly metrics: GatehouseMetrics;
  readonly credentials: CallCredentials;
}

const VERSION_CONFLICT = 'VERSION_CONFLICT';

/**
 * Publishes a command's one answer, staged with its claim first. `keyed`: what the write's own key
 * records of it, staged beside the command's claim and settled before the answer goes out.
 */
export type Answer = (result: ToolResult, keyed?: { readonly stage: () => Promise<unknown>; readonly settle: () => Promise<unknown> }) => Promise<void>;

/**
 * A write's answer and the state stored under its key, with what to log once it is out. `released`:
 * the system of record shows nothing was applied and an identical call may succeed (a retryable
 * refusal), so the key is given back rather than stored and the proposal reopened: a retry runs.
 */
interface Settlement {
  readonly result: ToolResult;
  readonly state: 'succeeded' | 'failed' | 'unknown' | 'released';
  readonly afterwards?: () => void;
}

const stateOfStored = (status: ToolResult['status']): 'succeeded' | 'failed' | 'unknown' =>
  status === 'ok' ? 'succeeded' : status === 'unknown' ? 'unknown' : 'failed';

/**
 * After a crash between staging a write's answer and settling its key, the redelivered order finds
 * the answer staged on its command's claim, and the key still in flight with the same answer staged
 * on it: the key is settled with that. A key given back before the answer stays given back; one
 * orphaned with nothing staged is left to the status query of whoever claims it next (its write
 * may be another command's).
 */
export async function settleKeyOfStagedAnswer(idempotency: IdempotencyStore, order: ExecutionOrder, owner: string, leaseMs: number): Promise<void> {
  const key = order.idempotency_key;
  if (key === null) return;
  // The key's lease was renewed beside the command's: it runs out at about the same time.
  const claim = await claimOrWait(idempotency, key, order.arguments_sha256, owner, leaseMs, Date.now() + leaseMs * 2, order.command_id);
  if (claim.kind === 'orphaned' && claim.staged !== undefined) {
    await idempotency.finish(key, owner, stateOfStored((JSON.parse(claim.staged) as StoredOutcome).status), claim.staged);
  } else if (claim.kind === 'claimed') {
    await idempotency.abandon(key, owner);
  }
}

/** A write's operation id, derived from its idempotency key: every owner of the key names it alike. */
export function writeOperationId(idempotencyKey: string): string {
  return `op_${sha256Hex(idempotencyKey).slice(0, 24)}`;
}

/**
 * A write, at most once, answered once through `answer` (which stages, publishes and records this
 * command's one answer): claim the idempotency key (a stored outcome answers any retry; a key
 * whose owner died goes to the status query, never a blind re-run), prove the approval, consume it
 * with the proposal, take the tenant and run slots and the resource's lock, run under the key, and
 * settle any ambiguous answer through the status query — or hand it to an operator.
 */
export async function executeWrite(
  order: ExecutionOrder,
  implementation: ToolImplementation,
  /** `span`: the execution's, which records how the write was answered. */
  record: { readonly headers: IHeaders | undefined; readonly origin: string; readonly span?: Span },
  deps: WritePathDeps,
  answer: Answer,
): Promise<void> {
  const headers = record.headers;
  const tool = implementation.contract;
  const address: ResultAddress = { command_id: order.command_id, run_id: order.run_id, tenant: order.tenant, tool: order.tool };
  const logContext = { command_id: order.command_id, run_id: order.run_id, tenant: order.tenant, tool: order.tool, arguments_sha256: order.arguments_sha256, trace_id: traceIdOf(headers) };
  const refuse = (error: ToolError) => answer(errorResult(address, error, { argumentsSha256: order.arguments_sha256 }));

  if (order.idempotency_key === null) {
    await refuse(toolError('IDEMPOTENCY_KEY_MISSING', 'A write reached the executor without an idempotency key'));
    return;
  }
  const key = order.idempotency_key;
  const deadline = order.deadline_at ?? Date.now() + tool.timeoutMs * 4;
  // The same for whichever executor ends up answering: a repeated answer is the same answer.
  const operationId = writeOperationId(key);
  // One owner token per delivery: two copies of an order in this very process must not both run.
  const owner = `${deps.executorId}/${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  const claim = await claimOrWait(deps.idempotency, key, order.arguments_sha256, owner, deps.leaseMs, Math.min(deadline, Date.now() + deps.leaseMs * 3), order.command_id);
  switch (claim.kind) {
    case 'stored':
    case 'unknown': {
      const { outcome, result } = fromStoredOutcome(claim.outcome, address, order.arguments_sha256);
      // This command has no answer yet (its claim says so): a retried command, or the redelivery of
      // one whose owner stopped after the key was settled, gets the stored answer.
      await answer(result);
      if (outcome.origin !== record.origin) deps.metrics.retry(tool.address, tool.retry);
      deps.logger.info({ ...logContext, idempotency_key: key, replay: true }, 'answered from the stored outcome');
      return;
    }
    case 'reused':
      await refuse(toolError('IDEMPOTENCY_KEY_REUSED', 'This operation already ran with other arguments'));
      return;
    case 'in_progress':
      if (claim.commandId === order.command_id) {
        // Another copy of this very command (a redelivery, or an order published twice) is running:
        // its answer is this command's answer. Leave the record unfinished; it comes back and then
        // finds the stored outcome, so the command never gets a second, different answer.
        throw new Error(`command ${order.command_id} is still running under ${claim.owner}`);
      }
      await refuse(toolError('IN_PROGRESS', 'The same operation is running now; ask again shortly', { retryAfterMs: claim.leaseLeftMs }));
      return;
    case 'orphaned':
    case 'claimed':
      break;
  }

  const context: ExecutionContext = {
    signal: AbortSignal.timeout(tool.timeoutMs),
    commandId: order.command_id,
    operationId,
    runId: order.run_id,
    tenant: order.tenant,
    principal: order.principal,
    environment: order.environment,
    idempotencyKey: key,
    deadlineAt: order.deadline_at,
    // What a status query presents; the handler's own run gets a write's credential (runLocked).
    credential: deps.credentials.forStatus(order, implementation),
  };
  const finish = async (result: ToolResult, state: 'succeeded' | 'failed' | 'unknown'): Promise<void> => {
    const outcome = toStoredOutcome(result, record.origin, headers);
    // Staged with the claim before it goes out: an owner that dies before the key is settled leaves
    // the answer for the next owner of the key to repeat, never a second, different one.
    await answer(result, { stage: () => deps.idempotency.stage(key, owner, outcome), settle: () => deps.idempotency.finish(key, owner, state, outcome) });
    deps.metrics.handlerDuration(order.tool, result.duration_ms);
  };
  const conclude = async (settlement: Settlement): Promise<void> => {
    if (settlement.state === 'released') {
      await releaseUnapplied();
      await deps.idempotency.abandon(key, owner);
      await answer(settlement.result);
    } else {
      await finish(settlement.result, settlement.state);
    }
    settlement.afterwards?.();
  };
  const extras = (durationMs: number | null) => ({ operationId, argumentsSha256: order.arguments_sha256, durationMs });
  const stopClaimLease = keepLease(() => deps.idempotency.renew(key, owner, deps.leaseMs), deps.leaseMs);
  try {
    if (claim.kind === 'orphaned') {
      if (claim.staged !== undefined) {
        // The previous owner had its answer ready: this command gets exactly that. (Its own command,
        // if another, is answered by that command's order, which comes back because it never finished.)
        const { outcome, result } = fromStoredOutcome(claim.staged, address, order.arguments_sha256);
        const staged = claim.staged;
        await answer(result, { stage: () => Promise.resolve(), settle: () => deps.idempotency.finish(key, owner, stateOfStored(outcome.status), staged) });
        deps.logger.info({ ...logContext, idempotency_key: key, previous_owner: claim.previousOwner }, 'answered with the answer the previous owner staged');
        return;
      }
      // A previous executor died mid-write: the system of record knows what happened, we do not.
      const settled = await settleAmbiguous(implementation, key, context, deps.catalog);
      const resend = settled.kind === 'unknown' && !settled.statusDown && tool.honoursIdempotencyKey === true;
      if (!resend) {
        await conclude(await judge(settled, `previous owner ${claim.previousOwner} stopped mid-write`, 'owner_lost'));
        return;
      }
      // The system of record never saw the key and honours it: sending the write again under the
      // same key applies it at most once. It goes the whole way again, approval proof included.
      deps.logger.info({ ...logContext, idempotency_key: key, previous_owner: claim.previousOwner }, 'orphaned write unknown to its system of record; sending it again under its key');
    }

    // A stopped run's write that has not started never starts (one that started finishes).
    const stopped = await runStoppedError(deps.runs, order.run_id);
    if (stopped !== undefined) {
      await deps.idempotency.abandon(key, owner);
      await refuse(stopped);
      deps.logger.info({ ...logContext, code: stopped.code }, 'write refused: the run is no longer active');
      return;
    }
    const authorized = await authorize(order, deps.approvals, deps.proposals, Date.now());
    if (!authorized.ok) {
      // Nothing ran: give the key back so the legitimate order under it can still run.
      await deps.idempotency.abandon(key, owner);
      await refuse(authorized.error);
      deps.logger.warn({ ...logContext, code: authorized.error.code }, 'write refused before execution');
      return;
    }
    const stored = storedArguments(deps.catalog, tool, order.proposal_id, authorized.args);
    if (!stored.ok) {
      // Nothing ran and nothing was consumed: the key goes back, as for a refused authorization.
      await deps.idempotency.abandon(key, owner);
      deps.metrics.outputViolation(tool.address, stored.error.code);
      await refuse(stored.error);
      deps.logger.warn({ ...logContext, code: stored.error.code, field: stored.error.field }, 'stored proposal refused by its proposal schema');
      return;
    }
    if ((await deps.approvals.consume(authorized.approval.approval_id, key)) === 'already_consumed') {
      await deps.idempotency.abandon(key, owner);
      await refuse(toolError('PROPOSAL_CONSUMED', 'This approval was already used'));
      return;
    }
    if (order.proposal_id !== null && (await deps.proposals.consume(order.proposal_id, key)) === 'already_consumed') {
      await deps.idempotency.abandon(key, owner);
      await refuse(toolError('PROPOSAL_CONSUMED', `Proposal ${order.proposal_id} was already used`));
      return;
    }

    const scopes: SlotScope[] = [
      { scope: `tenant:${order.tenant}`, limit: deps.limits.tenants[order.tenant] ?? deps.limits.tenantDefault },
      { scope: `run:${order.run_id}`, limit: deps.limits.run },
    ];
    if (!(await deps.slots.acquire(scopes, operationId, deps.leaseMs, deadline))) {
      await releaseUnapplied();
      await finish(errorResult(address, toolError('TIMEOUT', 'No concurrency slot of this tenant freed up before the deadline', { retryable: false }), extras(null)), 'failed');
      return;
    }
    deps.metrics.slotsAcquired(order.tenant);
    const stopSlotLease = keepLease(() => deps.slots.renew(scopes, operationId, deps.leaseMs), deps.leaseMs);
    let settlement: Settlement;
    try {
      settlement = await runLocked(stored.value);
    } finally {
      stopSlotLease();
      deps.metrics.slotsReleased(order.tenant);
      await deps.slots.release(scopes, operationId);
    }
    // The answer goes out only once the slots and the lock are free again: an agent that reads its
    // result and sends the next write at once finds the capacity this write held.
    await conclude(settlement);
  } finally {
    stopClaimLease();
  }

  /** Runs the handler under the resource's lock; the settlement is published by the caller. */
  async function runLocked(args: unknown): Promise<Settlement> {
    const resource = implementation.resourceOf?.(args);
    if (resource !== undefined && !(await deps.locks.lock(resource, operationId, deps.leaseMs, deadline))) {
      await releaseUnapplied();
      return { result: errorResult(address, toolError('TIMEOUT', `${resource} stayed busy until the deadline`, { retryable: false }), extras(null)), state: 'failed' };
    }
    const stopLockLease = resource === undefined ? () => undefined : keepLease(() => deps.locks.renew(resource, operationId, deps.leaseMs), deps.leaseMs);
    const started = Date.now();
    try {
      const raw = await runHandler(implementation, args, { ...context, credential: deps.credentials.forWrite(order, implementation, args) }, tool.timeoutMs);
      const valid = deps.catalog.validateOutput(tool, raw);
      if (!valid.ok) {
        // The write happened; its answer does not match the contract. Report that, never the raw answer.
        deps.metrics.outputViolation(tool.address, valid.error.code);
        return { result: errorResult(address, valid.error, extras(Date.now() - started)), state: 'failed' };
      }
      const ms = Date.now() - started;
      return {
        result: okResult(address, canonicalJson(valid.value), extras(ms)),
        state: 'succeeded',
        afterwards: () => deps.logger.info({ ...logContext, operation_id: operationId, idempotency_key: key, ms }, 'write applied'),
      };
    } catch (error) {
      const failure = isToolFailure(error) ? error : new ToolFailure(toolError('UPSTREAM_ERROR', 'handler failed'), { ambiguous: true });
      if (!failure.ambiguous) {
        if (failure.error.retryable) {
          // The system of record refused before applying anything (a 503 while it stops, say), and
          // says an identical call may succeed: that must be true, so the key is not kept for this answer.
          return {
            result: errorResult(address, failure.error, extras(Date.now() - started)),
            state: 'released',
            afterwards: () => deps.logger.info({ ...logContext, code: failure.error.code, idempotency_key: key }, 'write refused by the system of record; nothing applied, the key is free for a retry'),
          };
        }
        if (failure.error.code === VERSION_CONFLICT) {
          deps.metrics.versionConflict(tool.address);
          await releaseUnapplied();
        }
        return {
          result: errorResult(address, failure.error, extras(Date.now() - started)),
          state: 'failed',
          afterwards: () => deps.logger.info({ ...logContext, code: failure.error.code, idempotency_key: key }, 'write refused by the system of record'),
        };
      }
      const settled = await settleAmbiguous(implementation, key, context, deps.catalog);
      return judge(settled, failure.error.message, failure.error.code === 'TIMEOUT' ? 'timeout' : 'ambiguous_answer', Date.now() - started);
    } finally {
      stopLockLease();
      if (resource !== undefined) await deps.locks.unlock(resource, operationId);
    }
  }

  async function releaseUnapplied(): Promise<void> {
    // The effect did not happen (a version conflict, or no slot): the proposal stays unconsumed.
    if (order.proposal_id !== null) await deps.proposals.release(order.proposal_id, key);
  }

  /** What the status query established, as the settlement to publish; an unknown outcome is handed to an operator. */
  async function judge(settled: Awaited<ReturnType<typeof settleAmbiguous>>, lastError: string, reason: string, durationMs: number | null = null): Promise<Settlement> {
    if (settled.kind === 'succeeded') {
      return {
        result: okResult(address, settled.canonicalResult, extras(durationMs)),
        state: 'succeeded',
        afterwards: () => deps.logger.info({ ...logContext, idempotency_key: key, settled: 'succeeded' }, 'ambiguous write settled by the status query'),
      };
    }
    if (settled.kind === 'failed') {
      return {
        result: errorResult(address, settled.error, extras(durationMs)),
        state: 'failed',
        afterwards: () => deps.logger.info({ ...logContext, idempotency_key: key, settled: 'failed', code: settled.error.code }, 'ambiguous write settled by the status query'),
      };
    }
    const handoff: OperatorHandoff = {
      schema_version: 1,
      handoff_id: `hnd_${randomUUID().replace(/-/g, '').slice(0, 16)}`,
      command_id: order.command_id,
      run_id: order.run_id,
      tenant: order.tenant,
      tool: order.tool,
      proposal_id: order.proposal_id,
      idempotency_key: key,
      arguments_sha256: order.arguments_sha256,
      reason: settled.statusDown ? 'status_unavailable' : reason,
      last_error: `${lastError}; status query: ${settled.detail}`,
      executor: deps.executorId,
      detected_at: Date.now(),
    };
    await deps.publisher.publish('operator', order.tenant, handoff, headers);
    const unknown = errorResult(
      address,
      toolError('OUTCOME_UNKNOWN', 'The write may or may not have happened; an operator has been asked to establish it', {
        details: { handoff_id: handoff.handoff_id, idempotency_key: key },
      }),
      extras(durationMs),
    );
    return {
      result: unknown,
      state: 'unknown',
      afterwards: () => {
        deps.metrics.unknownOutcome(tool.address, handoff.reason);
        deps.logger.warn({ ...logContext, idempotency_key: key, handoff_id: handoff.handoff_id, reason: handoff.reason }, 'outcome unknown; handed to an operator');
      },
    };
  }
}
