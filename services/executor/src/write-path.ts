import { toolError } from '@gatehouse/contracts';
import type { ToolImplementation } from '@gatehouse/contracts';
import type { ExecutionOrder } from '@gatehouse/events';
import { keepLease } from './claim-wait.js';
import type { Answer } from './executor-ports.js';
import { addressOf, keyedWrite, refusalOf } from './keyed-write.js';
import type { KeyedWrite, Settlement, WritePathDeps, WriteRecord } from './keyed-write.js';
import { claimWriteKey, takeOverOrphanedWrite } from './write-claim.js';
import type { HeldKey } from './write-claim.js';
import { proveWrite } from './write-proof.js';
import { runUnderSlots } from './write-run.js';
import { settle } from './write-settlement.js';

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
  record: WriteRecord,
  deps: WritePathDeps,
  answer: Answer,
): Promise<void> {
  if (order.idempotency_key === null) {
    await answer(
      refusalOf(
        { order, address: addressOf(order) },
        toolError('IDEMPOTENCY_KEY_MISSING', 'A write reached the executor without an idempotency key'),
      ),
    );
    return;
  }
  const write = keyedWrite(order, implementation, order.idempotency_key, record, deps, answer);
  const held = await claimWriteKey(write);
  if (held === undefined) return;
  const stopClaimLease = keepLease(() => deps.ledger.renew(write.key, write.owner, deps.leaseMs), deps.leaseMs);
  try {
    const settlement = await settlementOf(write, held);
    if (settlement !== undefined) await settle(write, settlement);
  } finally {
    stopClaimLease();
  }
}

/** What becomes of a write whose key this delivery holds; undefined when it was answered already (a staged answer repeated). */
async function settlementOf(write: KeyedWrite, held: HeldKey): Promise<Settlement | undefined> {
  if (held.kind === 'orphaned') {
    const takenOver = await takeOverOrphanedWrite(write, held);
    if (takenOver === 'answered') return undefined;
    if (takenOver !== 'resend') return takenOver;
  }
  const proof = await proveWrite(write);
  if (!proof.ok) return proof.refusal;
  return runUnderSlots(write, proof.args);
}
