import { toolError } from '@gatehouse/contracts';
import type { Claim } from '@gatehouse/state';
import type { KeyedWrite, WriteOutcome } from './keyed-write.js';
import { askStatusQuery, outcomeFromStatus, resendableUnderKey } from './status-query.js';

/**
 * The write's key as this delivery has it: `outcome` when the key (or its previous owner's
 * status query) already tells how the write ends, none when the write is to run; `letGo` stops
 * renewing the key's lease, once the write is settled.
 */
export interface KeyHold {
  readonly outcome: WriteOutcome | undefined;
  readonly letGo: () => void;
}

/**
 * Claims the write's idempotency key and keeps its lease while the write goes on. A key whose
 * previous owner stopped is taken over: its staged answer is repeated, or the status query settles
 * what happened — unless the system of record never saw the key and honours it, when the write runs
 * again under its key. A key another owner holds tells the write's outcome instead (see `claimKey`).
 */
export async function holdWriteKey(write: KeyedWrite): Promise<KeyHold> {
  const { deps } = write;
  const claim = await claimKey(write);
  if (claim.kind !== 'claimed' && claim.kind !== 'orphaned') return { outcome: claim, letGo: () => undefined };
  const letGo = deps.ledger.keep(write.key, write.owner, deps.leaseMs);
  if (claim.kind === 'claimed') return { outcome: undefined, letGo };
  try {
    const takenOver = await takeOverOrphanedWrite(write, claim);
    return { outcome: takenOver === 'resend' ? undefined : takenOver, letGo };
  } catch (error) {
    letGo();
    throw error;
  }
}

/**
 * Claims the write's idempotency key, waiting while another owner of this same command holds it.
 * A key this delivery now holds comes back; otherwise what the key says: its stored answer (for
 * any retry), other arguments under it, or another command's write running under it.
 */
async function claimKey(write: KeyedWrite): Promise<Extract<Claim, { kind: 'claimed' | 'orphaned' }> | WriteOutcome> {
  const { order, deps, key } = write;
  const claim = await deps.ledger.claimWhenFree(
    key,
    order.arguments_sha256,
    write.owner,
    deps.leaseMs,
    Math.min(write.deadline, Date.now() + deps.leaseMs * 3),
    order.command_id,
  );
  switch (claim.kind) {
    case 'settled':
    case 'unknown':
      // This command has no answer yet (its claim says so): a retried command, or the redelivery of
      // one whose owner stopped after the key was settled, gets the stored answer.
      return { kind: 'stored', answer: claim.answer };
    case 'reused':
      return { kind: 'refused_at_key', error: toolError('IDEMPOTENCY_KEY_REUSED', 'This operation already ran with other arguments') };
    case 'in_progress':
      if (claim.commandId === order.command_id) {
        // Another copy of this very command (a redelivery, or an order published twice) is running:
        // its answer is this command's answer. Leave the record unfinished; it comes back and then
        // finds the stored outcome, so the command never gets a second, different answer.
        throw new Error(`command ${order.command_id} is still running under ${claim.owner}`);
      }
      return {
        kind: 'refused_at_key',
        error: toolError('IN_PROGRESS', 'The same operation is running now; ask again shortly', { retryAfterMs: claim.leaseLeftMs }),
      };
    case 'no_run':
      // Only a command's entry names a run; a write's key never does.
      throw new Error(`the ledger answered no_run for the write key of command ${order.command_id}`);
    case 'orphaned':
    case 'claimed':
      return claim;
  }
}

/**
 * Takes over a write whose previous owner stopped: its staged answer is repeated, or the status
 * query settles what happened — unless the system of record never saw the key and honours it, when
 * the write is sent again under its key (`resend`).
 */
async function takeOverOrphanedWrite(write: KeyedWrite, claim: Extract<Claim, { kind: 'orphaned' }>): Promise<WriteOutcome | 'resend'> {
  const { deps, key, logContext } = write;
  if (claim.staged !== undefined) {
    // The previous owner had its answer ready: this command gets exactly that. (Its own command,
    // if another, is answered by that command's order, which comes back because it never finished.)
    return { kind: 'staged', answer: claim.staged, previousOwner: claim.previousOwner };
  }
  // A previous executor died mid-write: the system of record knows what happened, we do not.
  const finding = await askStatusQuery(write.implementation, key, write.statusContext, deps.catalog);
  if (!resendableUnderKey(write.implementation, finding))
    return outcomeFromStatus(write, finding, `previous owner ${claim.previousOwner} stopped mid-write`, 'owner_lost');
  // The system of record never saw the key and honours it: sending the write again under the
  // same key applies it at most once. It goes the whole way again, approval proof included.
  deps.logger.info(
    { ...logContext, idempotency_key: key, previous_owner: claim.previousOwner },
    'orphaned write unknown to its system of record; sending it again under its key',
  );
  return 'resend';
}
