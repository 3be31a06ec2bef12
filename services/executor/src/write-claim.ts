import { toolError } from '@gatehouse/contracts';
import { fromStoredOutcome } from '@gatehouse/events';
import type { ExecutionOrder, StoredOutcome, ToolResult } from '@gatehouse/events';
import type { Claim } from '@gatehouse/state';
import { claimOrWait } from './claim-wait.js';
import type { LedgerEntries } from './executor-ports.js';
import { refusalOf } from './keyed-write.js';
import type { KeyedWrite, Settlement } from './keyed-write.js';
import { askStatusQuery, resendableUnderKey } from './status-protocol.js';
import { settlementFromStatus } from './write-settlement.js';

/** A claim that leaves the write's key with this delivery: a fresh key, or one whose owner stopped. */
export type HeldKey = Extract<Claim, { kind: 'claimed' | 'orphaned' }>;

const stateOfStored = (status: ToolResult['status']): 'succeeded' | 'failed' | 'unknown' =>
  status === 'ok' ? 'succeeded' : status === 'unknown' ? 'unknown' : 'failed';

/**
 * Claims the write's idempotency key. A key this delivery now holds comes back; otherwise the
 * command is answered here — a stored outcome answers any retry, other arguments under the key are
 * refused, and another command's write in flight answers IN_PROGRESS — and nothing comes back.
 */
export async function claimWriteKey(write: KeyedWrite): Promise<HeldKey | undefined> {
  const { order, deps, key } = write;
  const claim = await claimOrWait(
    deps.ledger,
    key,
    order.arguments_sha256,
    write.owner,
    deps.leaseMs,
    Math.min(write.deadline, Date.now() + deps.leaseMs * 3),
    order.command_id,
  );
  switch (claim.kind) {
    case 'settled':
    case 'unknown': {
      const { outcome, result } = fromStoredOutcome(claim.answer, write.address, order.arguments_sha256);
      // This command has no answer yet (its claim says so): a retried command, or the redelivery of
      // one whose owner stopped after the key was settled, gets the stored answer.
      await write.answer(result);
      if (outcome.origin !== write.record.origin)
        deps.metrics.retry(write.implementation.contract.address, write.implementation.contract.retry);
      deps.logger.info({ ...write.logContext, idempotency_key: key, replay: true }, 'answered from the stored outcome');
      return undefined;
    }
    case 'reused':
      await write.answer(refusalOf(write, toolError('IDEMPOTENCY_KEY_REUSED', 'This operation already ran with other arguments')));
      return undefined;
    case 'in_progress':
      if (claim.commandId === order.command_id) {
        // Another copy of this very command (a redelivery, or an order published twice) is running:
        // its answer is this command's answer. Leave the record unfinished; it comes back and then
        // finds the stored outcome, so the command never gets a second, different answer.
        throw new Error(`command ${order.command_id} is still running under ${claim.owner}`);
      }
      await write.answer(
        refusalOf(
          write,
          toolError('IN_PROGRESS', 'The same operation is running now; ask again shortly', { retryAfterMs: claim.leaseLeftMs }),
        ),
      );
      return undefined;
    case 'orphaned':
    case 'claimed':
      return claim;
  }
}

/**
 * Takes over a write whose previous owner stopped: its staged answer is repeated (`answered`), or
 * the status query settles what happened — unless the system of record never saw the key and
 * honours it, when the write is sent again under its key (`resend`).
 */
export async function takeOverOrphanedWrite(
  write: KeyedWrite,
  claim: Extract<Claim, { kind: 'orphaned' }>,
): Promise<'answered' | 'resend' | Settlement> {
  const { deps, key, logContext } = write;
  if (claim.staged !== undefined) {
    // The previous owner had its answer ready: this command gets exactly that. (Its own command,
    // if another, is answered by that command's order, which comes back because it never finished.)
    const { outcome, result } = fromStoredOutcome(claim.staged, write.address, write.order.arguments_sha256);
    const staged = claim.staged;
    await write.answer(result, {
      stage: () => Promise.resolve(),
      settle: () => deps.ledger.settle(key, write.owner, stateOfStored(outcome.status), staged),
    });
    deps.logger.info(
      { ...logContext, idempotency_key: key, previous_owner: claim.previousOwner },
      'answered with the answer the previous owner staged',
    );
    return 'answered';
  }
  // A previous executor died mid-write: the system of record knows what happened, we do not.
  const finding = await askStatusQuery(write.implementation, key, write.statusContext, deps.catalog);
  if (!resendableUnderKey(write.implementation, finding))
    return settlementFromStatus(write, finding, `previous owner ${claim.previousOwner} stopped mid-write`, 'owner_lost');
  // The system of record never saw the key and honours it: sending the write again under the
  // same key applies it at most once. It goes the whole way again, approval proof included.
  deps.logger.info(
    { ...logContext, idempotency_key: key, previous_owner: claim.previousOwner },
    'orphaned write unknown to its system of record; sending it again under its key',
  );
  return 'resend';
}

/**
 * After a crash between staging a write's answer and settling its key, the redelivered order finds
 * the answer staged on its command's claim, and the key still in flight with the same answer staged
 * on it: the key is settled with that. A key given back before the answer stays given back; one
 * orphaned with nothing staged is left to the status query of whoever claims it next (its write
 * may be another command's).
 */
export async function settleKeyOfStagedAnswer(
  ledger: Pick<LedgerEntries, 'claim' | 'settle' | 'giveBack'>,
  order: ExecutionOrder,
  owner: string,
  leaseMs: number,
): Promise<void> {
  const key = order.idempotency_key;
  if (key === null) return;
  // The key's lease was renewed beside the command's: it runs out at about the same time.
  const claim = await claimOrWait(ledger, key, order.arguments_sha256, owner, leaseMs, Date.now() + leaseMs * 2, order.command_id);
  if (claim.kind === 'orphaned' && claim.staged !== undefined) {
    await ledger.settle(key, owner, stateOfStored((JSON.parse(claim.staged) as StoredOutcome).status), claim.staged);
  } else if (claim.kind === 'claimed') {
    await ledger.giveBack(key, owner);
  }
}
