import { canonicalJson, isToolFailure, toolError, ToolFailure } from '@gatehouse/contracts';
import type { SlotScope } from '@gatehouse/state';
import type { KeyedWrite, WriteOutcome } from './keyed-write.js';
import { runHandler } from './run-handler.js';
import { askStatusQuery, outcomeFromStatus, resendableUnderKey } from './status-query.js';

const VERSION_CONFLICT = 'VERSION_CONFLICT';

/**
 * Sends of one write at most. A write that failed ambiguously (a timeout: the request may still be
 * queued at the system of record) and whose key the system of record does not know yet is sent once
 * more under the key before anyone is asked to settle it by hand.
 */
const SENDS = 2;

/**
 * Runs a proven write under the tenant's and the run's slots and its resource's lock, and comes
 * back with its outcome once both are free again: an agent that reads its result and sends the
 * next write at once finds the capacity this write held.
 */
export async function runUnderSlots(write: KeyedWrite, args: unknown): Promise<WriteOutcome> {
  const { order, deps, operationId } = write;
  const scopes: SlotScope[] = [
    { scope: `tenant:${order.tenant}`, limit: deps.limits.tenants[order.tenant] ?? deps.limits.tenantDefault },
    { scope: `run:${order.run_id}`, limit: deps.limits.run },
  ];
  if (!(await deps.slots.acquire(scopes, operationId, deps.leaseMs, write.deadline))) {
    // Nothing ran: the proposal is reopened, so committing it again runs.
    return {
      kind: 'not_applied',
      error: toolError('TIMEOUT', 'No concurrency slot of this tenant freed up before the deadline', { retryable: false }),
      durationMs: null,
      reopensProposal: true,
    };
  }
  deps.metrics.slotsAcquired(order.tenant);
  const stopSlotLease = deps.slots.keep(scopes, operationId, deps.leaseMs);
  try {
    return await runLocked(write, args);
  } finally {
    stopSlotLease();
    deps.metrics.slotsReleased(order.tenant);
    await deps.slots.release(scopes, operationId);
  }
}

/** Runs the handler under the resource's lock (held through any status query); the caller answers its outcome. */
async function runLocked(write: KeyedWrite, args: unknown): Promise<WriteOutcome> {
  const { order, implementation, deps, operationId } = write;
  let resource: string | undefined;
  try {
    resource = implementation.resourceOf?.(args);
  } catch (error) {
    // The pack's own bug, before anything was sent: the proposal is reopened.
    // Its name only: a message may quote the arguments.
    deps.logger.error({ ...write.logContext, error: error instanceof Error ? error.name : typeof error }, 'resourceOf threw');
    const message = `resourceOf of ${implementation.contract.address} failed; nothing was sent`;
    return {
      kind: 'not_applied',
      error: toolError('UPSTREAM_ERROR', message, { retryable: false }),
      durationMs: null,
      reopensProposal: true,
    };
  }
  if (resource !== undefined && !(await deps.locks.lock(resource, operationId, deps.leaseMs, write.deadline))) {
    // Nothing ran: the proposal is reopened, so committing it again runs.
    return {
      kind: 'not_applied',
      error: toolError('TIMEOUT', `${resource} stayed busy until the deadline`, { retryable: false }),
      durationMs: null,
      reopensProposal: true,
    };
  }
  const stopLockLease = resource === undefined ? () => undefined : deps.locks.keep(resource, operationId, deps.leaseMs);
  const started = Date.now();
  try {
    for (let send = 1; ; send += 1) {
      await fence(write);
      try {
        // Each send presents an assertion of its own.
        const raw = await runHandler(
          implementation,
          args,
          { ...write.statusContext, credential: deps.credentials.forWrite(order, implementation, args) },
          implementation.contract.timeoutMs,
        );
        return outcomeOfAnswer(write, raw, started);
      } catch (error) {
        const settled = await outcomeOfFailure(write, error, started, send < SENDS);
        if (settled !== 'resend') return settled;
      }
    }
  } finally {
    stopLockLease();
    if (resource !== undefined) await deps.locks.unlock(resource, operationId);
  }
}

/**
 * Fencing: the key and the command are still this delivery's right before anything is sent. A lease
 * that ran out while this executor could not reach Redis (a partition, a stalled process) may have
 * been taken over; its new owner settles the write and answers, and this delivery sends nothing and
 * answers nothing: it fails, and its record comes back to find the new owner's answer. The command
 * is renewed as well as the key: a new owner that got a retryable refusal gives the key back and
 * answers "nothing applied", and a stalled delivery that then claimed the free key must not send.
 * (A lease that ran out with no one taking it over is simply renewed.)
 */
async function fence(write: KeyedWrite): Promise<void> {
  const { deps, key, owner } = write;
  const taken = !(await deps.ledger.renew(key, owner, deps.leaseMs)) ? 'key' : !(await write.answer.holdsCommand()) ? 'command' : undefined;
  if (taken === undefined) return;
  deps.logger.warn({ ...write.logContext, idempotency_key: key }, `write not sent: its ${taken} was taken over by another owner`);
  throw new Error(`the ${taken} of ${key} was taken over by another owner before the write was sent; that owner answers`);
}

/** The handler answered: the write happened. Its answer is checked against the contract before anything leaves. */
function outcomeOfAnswer(write: KeyedWrite, raw: unknown, started: number): WriteOutcome {
  const { deps, logContext } = write;
  const tool = write.implementation.contract;
  const valid = deps.catalog.validateOutput(tool, raw);
  if (!valid.ok) {
    // The write happened; its answer does not match the contract. Report that, never the raw answer.
    deps.metrics.outputViolation(tool.address, valid.error.code);
    return { kind: 'failed', error: valid.error, durationMs: Date.now() - started, reopensProposal: false };
  }
  const ms = Date.now() - started;
  return {
    kind: 'applied',
    result: canonicalJson(valid.value),
    durationMs: ms,
    note: () => deps.logger.info({ ...logContext, operation_id: write.operationId, idempotency_key: write.key, ms }, 'write applied'),
  };
}

/**
 * The handler failed. A failure that is not ambiguous says what the system of record did (nothing
 * applied); an ambiguous one (a timeout, a lost connection, an unexpected throw) goes to the status
 * query, and one the system of record turns out not to know is sent again (`resend`) while sends remain.
 */
async function outcomeOfFailure(write: KeyedWrite, error: unknown, started: number, mayResend: boolean): Promise<WriteOutcome | 'resend'> {
  const { deps, logContext, key } = write;
  const tool = write.implementation.contract;
  const failure = isToolFailure(error) ? error : new ToolFailure(toolError('UPSTREAM_ERROR', 'handler failed'), { ambiguous: true });
  if (failure.ambiguous) {
    const finding = await askStatusQuery(write.implementation, key, write.statusContext, deps.catalog);
    if (mayResend && Date.now() < write.deadline && resendableUnderKey(write.implementation, finding)) {
      deps.logger.info(
        { ...logContext, idempotency_key: key, code: failure.error.code },
        'ambiguous write unknown to its system of record; sending it again under its key',
      );
      return 'resend';
    }
    return outcomeFromStatus(
      write,
      finding,
      failure.error.message,
      failure.error.code === 'TIMEOUT' ? 'timeout' : 'ambiguous_answer',
      Date.now() - started,
    );
  }
  const durationMs = Date.now() - started;
  if (failure.error.retryable) {
    // The system of record refused before applying anything (a 503 while it stops, say), and
    // says an identical call may succeed: that must be true.
    return {
      kind: 'not_applied',
      error: failure.error,
      durationMs,
      reopensProposal: true,
      note: () =>
        deps.logger.info(
          { ...logContext, code: failure.error.code, idempotency_key: key },
          'write refused by the system of record; nothing applied, the key is free for a retry',
        ),
    };
  }
  const conflict = failure.error.code === VERSION_CONFLICT;
  if (conflict) deps.metrics.versionConflict(tool.address);
  return {
    kind: 'failed',
    error: failure.error,
    durationMs,
    reopensProposal: conflict,
    note: () =>
      deps.logger.info({ ...logContext, code: failure.error.code, idempotency_key: key }, 'write refused by the system of record'),
  };
}
