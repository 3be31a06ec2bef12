import { toolError } from '@gatehouse/contracts';
import type { ToolError } from '@gatehouse/contracts';
import { authorize } from './approval-check.js';
import type { KeyedWrite, WriteOutcome } from './keyed-write.js';
import { runStoppedError } from './run-state.js';
import { storedArguments } from './stored-arguments.js';

/** The arguments a proven write runs with, or its refusal: nothing ran. */
export type Proof = { readonly ok: true; readonly args: unknown } | { readonly ok: false; readonly refusal: WriteOutcome };

/** A refusal before anything ran or was consumed: the legitimate order under the same key must still be able to run. */
const refused = (error: ToolError, note?: () => void): Proof => ({
  ok: false,
  refusal: { kind: 'refused', error, note },
});

/**
 * Everything a write proves before it runs, and the single use it takes: its run still active, its
 * approval (see `authorize`), its stored arguments fitting the commit's proposal schema, then the
 * approval and the proposal consumed under the write's key.
 */
export async function proveWrite(write: KeyedWrite): Promise<Proof> {
  const { order, deps, logContext, key } = write;
  const tool = write.implementation.contract;
  // A stopped run's write that has not started never starts (one that started finishes).
  const stopped = await runStoppedError(deps.runs, order.run_id, deps.clock.now());
  if (stopped !== undefined) {
    return refused(stopped, () => deps.logger.info({ ...logContext, code: stopped.code }, 'write refused: the run is no longer active'));
  }
  const authorized = await authorize(order, deps.approvals, deps.proposals, deps.clock.now());
  if (!authorized.ok) {
    // Nothing ran: give the key back so the legitimate order under it can still run.
    return refused(authorized.error, () =>
      deps.logger.warn({ ...logContext, code: authorized.error.code }, 'write refused before execution'),
    );
  }
  const stored = storedArguments(deps.catalog, tool, order.proposal_id, authorized.args);
  if (!stored.ok) {
    // Nothing ran and nothing was consumed: the key goes back, as for a refused authorization.
    deps.metrics.outputViolation(tool.address, stored.error.code);
    return refused(stored.error, () =>
      deps.logger.warn(
        { ...logContext, code: stored.error.code, field: stored.error.field },
        'stored proposal refused by its proposal schema',
      ),
    );
  }
  // A record that left its store since it was read (its TTL ran out in between) is not there to
  // be used: the write is refused as if it had been missing from the start, never run unconsumed.
  const approvalTaken = await deps.approvals.consume(authorized.approval.approval_id, key);
  if (approvalTaken === 'already_consumed') return refused(toolError('PROPOSAL_CONSUMED', 'This approval was already used'));
  if (approvalTaken === 'missing') {
    return refused(toolError('APPROVAL_NOT_FOUND', 'The approval this write names left the approval store before it was used'));
  }
  if (order.proposal_id !== null) {
    const proposalTaken = await deps.proposals.consume(order.proposal_id, key);
    if (proposalTaken === 'already_consumed') {
      return refused(toolError('PROPOSAL_CONSUMED', `Proposal ${order.proposal_id} was already used`));
    }
    if (proposalTaken === 'missing') return refused(toolError('PROPOSAL_NOT_FOUND', `Proposal ${order.proposal_id} is gone`));
  }
  return { ok: true, args: stored.value };
}
