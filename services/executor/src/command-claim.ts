import { fromStoredOutcome, toStoredOutcome } from '@gatehouse/events';
import type { AnswerScanVerdict, ConsumedRecord, DeadLetters, ExecutionOrder, PublishCondition, ToolResult } from '@gatehouse/events';
import type { GatehouseMetrics, Logger } from '@gatehouse/telemetry';
import type { Answer, LedgerEntries } from './executor-ports.js';
import { addressOf, ownerToken, termsOf } from './order-context.js';
import { settleKeyFromStagedAnswer } from './write-path.js';

// How long a copy waits for another owner of its command, beyond two leases, when the tool is not
// hosted here and so has no timeout to go by.
const DEFAULT_TIMEOUT_MS = 30_000;

/** The claim that makes a command's answer one answer: per run, so two runs' command ids never meet. */
export function commandClaimKey(runId: string, commandId: string): string {
  return `cmd:${runId}:${commandId}`;
}

/** One delivery of an order: the record it came in, and how its command's results are published. */
export interface CommandDelivery {
  readonly order: ExecutionOrder;
  readonly record: ConsumedRecord;
  /** The record as `topic:partition:offset`: the stored answer names the execution that produced it. */
  readonly origin: string;
  readonly logContext: Readonly<Record<string, unknown>>;
  /**
   * Publishes a result of the command on gatehouse.results; `holds` is asked inside the publisher's
   * transaction, after the result is in the log, and the result commits only while it holds.
   */
  readonly publish: (result: ToolResult, holds: PublishCondition) => Promise<void>;
  /** What gatehouse.results holds of this result, where `publish` would put it (asked before a staged answer goes out again). */
  readonly alreadyOut: (result: ToolResult) => Promise<AnswerScanVerdict>;
}

export interface CommandClaimDeps {
  readonly ledger: LedgerEntries;
  readonly executorId: string;
  readonly leaseMs: number;
  readonly metrics: GatehouseMetrics;
  readonly logger: Logger;
  readonly deadLetters: DeadLetters;
}

/** A command whose claim this delivery holds: it, and only it, answers the command. */
export interface HeldCommand {
  readonly key: string;
  readonly owner: string;
}

/**
 * Claims the delivery's command, so a redelivery, a rebalance, a crash or a replay of the record
 * never yields a second execution or a second answer. The claim comes back when this delivery is to
 * answer; a command answered already (or whose staged answer is repeated here) comes back undefined.
 * `toolTimeoutMs`: the hosted tool's, bounding the wait for another live owner.
 */
export async function claimCommand(
  delivery: CommandDelivery,
  toolTimeoutMs: number | undefined,
  deps: CommandClaimDeps,
): Promise<HeldCommand | undefined> {
  const { order, record, logContext } = delivery;
  const key = commandClaimKey(order.run_id, order.command_id);
  const owner = ownerToken(deps.executorId);
  const claimDeadline = Date.now() + deps.leaseMs * 2 + (toolTimeoutMs ?? DEFAULT_TIMEOUT_MS);
  const claim = await deps.ledger.claimWhenFree(key, order.arguments_sha256, owner, deps.leaseMs, claimDeadline, order.command_id);
  if (claim.kind === 'in_progress') {
    // Still held by a live owner: leave the record unfinished so it comes back, rather than
    // dropping it — if that owner dies, this delivery is the one that answers.
    throw new Error(`command ${order.command_id} is still held by ${claim.owner}`);
  }
  if (claim.kind === 'reused') {
    // Another order under a command id already answered: answering it would give the command a
    // second answer. Operators find it in the DLQ.
    deps.metrics.duplicateOrder('command_id_reused');
    if (record.origin !== undefined)
      await deps.deadLetters.send(
        record.origin,
        'command_id_reused',
        'an order with another arguments_sha256 under a command id already claimed; not answered',
      );
    deps.logger.warn({ ...logContext }, 'order under a claimed command id with a different hash; not answered');
    return undefined;
  }
  if (claim.kind === 'settled' || claim.kind === 'unknown') {
    // A replay of the order, a copy the policy service published again, or a redelivery after
    // the answer went out: the command has its answer, and gets no other.
    deps.metrics.duplicateOrder('answered');
    deps.logger.info({ ...logContext, claim: claim.kind }, 'command already answered; this copy gets nothing');
    return undefined;
  }
  if (claim.kind === 'orphaned' && claim.staged !== undefined) {
    await repeatStagedAnswer(delivery, { key, owner }, claim.staged, deps);
    deps.logger.info(
      { ...logContext, previous_owner: claim.previousOwner },
      'answered with the answer an executor staged before it stopped',
    );
    return undefined;
  }
  return { key, owner };
}

/**
 * The answer a stopped executor staged on the command's claim, published as it was — unless the
 * results topic holds it already: the stopped owner may have published it and died before marking
 * it published, and a subscriber would then see the command answered twice.
 */
async function repeatStagedAnswer(delivery: CommandDelivery, held: HeldCommand, staged: string, deps: CommandClaimDeps): Promise<void> {
  const { order } = delivery;
  const { result } = fromStoredOutcome(staged, addressOf(order), order.arguments_sha256);
  // The write's key was staged beside this answer: settled now, or a later retry (and an
  // operator's resolution of an unknown outcome) would find it in flight.
  if (order.effect === 'write' && order.idempotency_key !== null)
    await settleKeyFromStagedAnswer(deps.ledger, order, held.owner, deps.leaseMs);
  const out = await delivery.alreadyOut(result);
  if (out === 'published')
    deps.logger.info({ ...delivery.logContext }, 'the staged answer is on the results topic already; not published again');
  else await delivery.publish(result, stillHeld(deps.ledger, held, staged, order, deps.leaseMs));
  await deps.ledger.settle(held.key, held.owner, result.status === 'ok' ? 'succeeded' : 'failed', staged);
}

/**
 * What an answer commits under, asked inside the publisher's transaction once the answer is in the
 * log: this delivery still holds its command. Its lease is renewed; a claim Redis lost meanwhile (a
 * restart without persistence, a failover before replication) is no one else's, and is made again
 * with the answer staged on it, as staging does, so the answer of a write that ran is not withdrawn
 * for a loss of Redis' (its redelivery would find the approval lost too, and contradict the write).
 * Only a claim another owner holds now refuses.
 */
function stillHeld(ledger: LedgerEntries, held: HeldCommand, staged: string, order: ExecutionOrder, leaseMs: number): PublishCondition {
  return async () =>
    (await ledger.renew(held.key, held.owner, leaseMs)) ||
    (await ledger.stage(held.key, held.owner, staged, termsOf(order, leaseMs))) === 'staged';
}

/**
 * The command's one answer. It is staged with the claim before it is published and replaced by the
 * final state after: an executor that dies between the two leaves its answer for the next owner to
 * repeat. A write then stages and settles its key (`keyed`): settled before the answer is out, so
 * whoever reads the answer and retries at once finds the stored outcome.
 */
export function commandAnswer(delivery: CommandDelivery, held: HeldCommand, ledger: LedgerEntries, leaseMs: number): Answer {
  const answer = async (result: ToolResult, keyed?: Parameters<Answer>[1]): Promise<void> => {
    const outcome = toStoredOutcome(result, delivery.origin);
    // The command's stage first, and the key's only once it held: a delivery whose command was
    // taken over must not stage on a key the new owner may have given back since, or the key would
    // keep this stale answer and the agent's retry would get it instead of running.
    const staging = await ledger.stage(held.key, held.owner, outcome, termsOf(delivery.order, leaseMs));
    if (staging === 'taken') {
      // This owner's lease ran out and another owner took the command over (a stalled event
      // loop): that owner answers, so publishing here could give the command a second answer.
      // (A claim Redis lost is no one else's: staging makes it again, and the answer goes out.)
      throw new Error(`command ${delivery.order.command_id} was taken over by another owner; it answers`);
    }
    await keyed?.stage();
    await keyed?.settle();
    // Through a transactional publisher, committed only while this delivery still holds the command:
    // renewed inside the transaction, once the answer is in the log. A delivery that lost it
    // meanwhile publishes nothing, and the next owner's scan, which waits for open transactions,
    // finds this answer or its absence. (A plain publisher has no transaction and does not ask.)
    await delivery.publish(result, stillHeld(ledger, held, outcome, delivery.order, leaseMs));
    await ledger.settle(held.key, held.owner, result.status === 'ok' ? 'succeeded' : 'failed', outcome);
  };
  return Object.assign(answer, { holdsCommand: () => ledger.renew(held.key, held.owner, leaseMs) });
}
