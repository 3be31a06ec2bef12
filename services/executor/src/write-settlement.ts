import { errorResult, okResult, toStoredOutcome } from '@gatehouse/events';
import type { ToolResult } from '@gatehouse/events';
import { termsOf, writeExtras } from './keyed-write.js';
import type { KeyedWrite, Settlement } from './keyed-write.js';
import { handOffToOperator } from './operator-handoff.js';
import type { StatusFinding } from './status-protocol.js';

/**
 * Answers a write and settles its key — the one place a claimed key is given back or keeps its
 * answer. A proposal the write did not apply is reopened first; what to log goes out last.
 */
export async function settle(write: KeyedWrite, settlement: Settlement): Promise<void> {
  if (settlement.reopensProposal) await reopenProposal(write);
  if (settlement.key === 'given_back') {
    await write.deps.ledger.giveBack(write.key, write.owner);
    await write.answer(settlement.result);
  } else {
    await answerUnderKey(write, settlement.result, settlement.key);
  }
  settlement.afterwards?.();
}

async function answerUnderKey(write: KeyedWrite, result: ToolResult, state: 'succeeded' | 'failed' | 'unknown'): Promise<void> {
  const { key, owner, deps } = write;
  const outcome = toStoredOutcome(result, write.record.origin, write.record.headers);
  // Staged with the claim before it goes out: an owner that dies before the key is settled leaves
  // the answer for the next owner of the key to repeat, never a second, different one.
  await write.answer(result, {
    stage: () => deps.ledger.stage(key, owner, outcome, termsOf(write.order, deps.leaseMs)),
    settle: () => deps.ledger.settle(key, owner, state, outcome),
  });
  deps.metrics.handlerDuration(write.order.tool, result.duration_ms);
}

async function reopenProposal(write: KeyedWrite): Promise<void> {
  // The effect did not happen (a version conflict, or no slot): the proposal stays unconsumed.
  if (write.order.proposal_id !== null) await write.deps.proposals.release(write.order.proposal_id, write.key);
}

/** What the status query established, as the settlement to publish; an unknown outcome is handed to an operator. */
export async function settlementFromStatus(
  write: KeyedWrite,
  finding: StatusFinding,
  lastError: string,
  reason: string,
  durationMs: number | null = null,
): Promise<Settlement> {
  const { deps, key, logContext } = write;
  if (finding.kind === 'succeeded') {
    return {
      result: okResult(write.address, finding.canonicalResult, writeExtras(write, durationMs)),
      key: 'succeeded',
      reopensProposal: false,
      afterwards: () =>
        deps.logger.info({ ...logContext, idempotency_key: key, settled: 'succeeded' }, 'ambiguous write settled by the status query'),
    };
  }
  if (finding.kind === 'failed') {
    return {
      result: errorResult(write.address, finding.error, writeExtras(write, durationMs)),
      key: 'failed',
      reopensProposal: false,
      afterwards: () =>
        deps.logger.info(
          { ...logContext, idempotency_key: key, settled: 'failed', code: finding.error.code },
          'ambiguous write settled by the status query',
        ),
    };
  }
  return handOffToOperator(write, finding, lastError, reason, durationMs);
}
