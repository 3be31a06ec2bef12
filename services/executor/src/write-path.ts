import type { ToolError } from '@gatehouse/contracts';
import { errorResult, fromStoredOutcome, okResult, toStoredOutcome } from '@gatehouse/events';
import type { ExecutionOrder, StoredOutcome, ToolResult } from '@gatehouse/events';
import type { Verdict } from '@gatehouse/state';
import type { LedgerEntries } from './executor-ports.js';
import type { KeyedWrite, WriteOutcome } from './keyed-write.js';
import { termsOf } from './order-context.js';

// What a write's key keeps, decided here and nowhere else: the last step of the write's pipeline
// (`write-pipeline.ts`), and the settling of a key a crashed delivery left with its answer staged.

/**
 * Answers a write and settles its key: the one place that decides what a key keeps. An answer
 * the key holds already is repeated and the key left as it is; a refusal at the key leaves it to
 * its owner; a write refused before it ran, or one the system of record did not apply and says
 * may succeed, gives the key back (an identical call runs); what was applied, refused for good or
 * handed to an operator is staged with the key before it goes out and kept after. A proposal the
 * write did not apply is reopened first; what to log goes out last.
 */
export async function settle(write: KeyedWrite, outcome: WriteOutcome): Promise<void> {
  const { deps, key, owner, logContext } = write;
  switch (outcome.kind) {
    case 'stored': {
      const { outcome: stored, result } = fromStoredOutcome(outcome.answer, write.address, write.order.arguments_sha256);
      await write.answer(result);
      if (stored.origin !== write.record.origin)
        deps.metrics.retry(write.implementation.contract.address, write.implementation.contract.retry);
      deps.logger.info({ ...logContext, idempotency_key: key, replay: true }, 'answered from the stored outcome');
      return;
    }
    case 'staged': {
      const { outcome: stored, result } = fromStoredOutcome(outcome.answer, write.address, write.order.arguments_sha256);
      await write.answer(result, {
        stage: () => Promise.resolve('staged'),
        settle: () => deps.ledger.settle(key, owner, verdictOf(stored.status), outcome.answer),
      });
      deps.logger.info(
        { ...logContext, idempotency_key: key, previous_owner: outcome.previousOwner },
        'answered with the answer the previous owner staged',
      );
      return;
    }
    case 'refused_at_key':
      await write.answer(refusalOf(write, outcome.error));
      return;
    case 'refused':
      await deps.ledger.giveBack(key, owner);
      await write.answer(refusalOf(write, outcome.error));
      break;
    case 'not_applied': {
      // The proposal is reopened only by the delivery that still held the key: one whose key was
      // taken over meanwhile would reopen the proposal the new owner consumed and writes with.
      const gaveBack = await deps.ledger.giveBack(key, owner);
      if (outcome.reopensProposal && gaveBack) await reopenProposal(write);
      await write.answer(errorResult(write.address, outcome.error, writeExtras(write, outcome.durationMs)));
      break;
    }
    case 'applied':
      await answerUnderKey(write, okResult(write.address, outcome.result, writeExtras(write, outcome.durationMs)), 'succeeded');
      break;
    case 'failed':
      if (outcome.reopensProposal && (await deps.ledger.renew(key, owner, deps.leaseMs))) await reopenProposal(write);
      await answerUnderKey(write, errorResult(write.address, outcome.error, writeExtras(write, outcome.durationMs)), 'failed');
      break;
    case 'unknown':
      await answerUnderKey(write, errorResult(write.address, outcome.error, writeExtras(write, outcome.durationMs)), 'unknown');
      break;
  }
  outcome.note?.();
}

/** The answer, staged with the key before it goes out (an owner that dies before settling leaves it for the next owner to repeat), then kept on it. */
async function answerUnderKey(write: KeyedWrite, result: ToolResult, verdict: Verdict): Promise<void> {
  const { key, owner, deps } = write;
  const stored = toStoredOutcome(result, write.record.origin, write.record.headers);
  await write.answer(result, {
    stage: () => deps.ledger.stage(key, owner, stored, termsOf(write.order, deps.leaseMs)),
    settle: () => deps.ledger.settle(key, owner, verdict, stored),
  });
  deps.metrics.handlerDuration(write.order.tool, result.duration_ms);
}

/** The effect did not happen (a version conflict, or no slot): the proposal is open again. */
async function reopenProposal(write: KeyedWrite): Promise<void> {
  if (write.order.proposal_id !== null) await write.deps.proposals.release(write.order.proposal_id, write.key);
}

const verdictOf = (status: ToolResult['status']): Verdict => (status === 'ok' ? 'succeeded' : status === 'unknown' ? 'unknown' : 'failed');

/**
 * After a crash between staging a write's answer and settling its key, the redelivered order finds
 * the answer staged on its command's claim, and the key still in flight with the same answer staged
 * on it: the key is settled with that. A key given back before the answer stays given back; one
 * orphaned with nothing staged is left to the status query of whoever claims it next (its write
 * may be another command's).
 */
export async function settleKeyFromStagedAnswer(
  ledger: Pick<LedgerEntries, 'claimWhenFree' | 'settle' | 'giveBack'>,
  order: ExecutionOrder,
  owner: string,
  leaseMs: number,
): Promise<void> {
  const key = order.idempotency_key;
  if (key === null) return;
  // The key's lease was renewed beside the command's: it runs out at about the same time.
  const claim = await ledger.claimWhenFree(key, order.arguments_sha256, owner, leaseMs, Date.now() + leaseMs * 2, order.command_id);
  if (claim.kind === 'orphaned' && claim.staged !== undefined) {
    await ledger.settle(key, owner, verdictOf((JSON.parse(claim.staged) as StoredOutcome).status), claim.staged);
  } else if (claim.kind === 'claimed') {
    await ledger.giveBack(key, owner);
  }
}

/** A refusal of the write before anything ran: no operation, no duration. */
function refusalOf(write: KeyedWrite, error: ToolError): ToolResult {
  return errorResult(write.address, error, { argumentsSha256: write.order.arguments_sha256 });
}

/** What a result of the write's own run carries beside its answer. */
function writeExtras(write: KeyedWrite, durationMs: number | null) {
  return { operationId: write.operationId, argumentsSha256: write.order.arguments_sha256, durationMs };
}
