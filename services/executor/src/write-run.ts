import { toolError } from '@gatehouse/contracts';
import type { SlotScope } from '@gatehouse/state';
import type { KeyedWrite, WriteOutcome } from './keyed-write.js';
import { runHandler } from './run-handler.js';
import { outcomeOfAnswer, outcomeOfFailure } from './write-outcome.js';

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
