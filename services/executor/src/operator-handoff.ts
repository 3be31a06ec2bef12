import { randomUUID } from 'node:crypto';
import { toolError } from '@gatehouse/contracts';
import { errorResult } from '@gatehouse/events';
import type { OperatorHandoff } from '@gatehouse/events';
import { writeExtras } from './keyed-write.js';
import type { KeyedWrite, Settlement } from './keyed-write.js';
import type { StatusFinding } from './status-protocol.js';

/**
 * A write whose outcome no one can establish, handed to people: an `OperatorHandoff` on
 * gatehouse.operator (reason `status_unavailable` when the status query could not be asked), and
 * the settlement that answers the agent `OUTCOME_UNKNOWN` and keeps that on the key.
 */
export async function handOffToOperator(
  write: KeyedWrite,
  finding: Extract<StatusFinding, { kind: 'unknown' }>,
  lastError: string,
  reason: string,
  durationMs: number | null,
): Promise<Settlement> {
  const { order, key, deps } = write;
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
    reason: finding.statusDown ? 'status_unavailable' : reason,
    last_error: `${lastError}; status query: ${finding.detail}`,
    executor: deps.executorId,
    detected_at: deps.clock.now(),
  };
  await deps.publisher.publish('operator', order.tenant, handoff, write.record.headers);
  const unknown = errorResult(
    write.address,
    toolError('OUTCOME_UNKNOWN', 'The write may or may not have happened; an operator has been asked to establish it', {
      details: { handoff_id: handoff.handoff_id, idempotency_key: key },
    }),
    writeExtras(write, durationMs),
  );
  return {
    result: unknown,
    key: 'unknown',
    reopensProposal: false,
    afterwards: () => {
      deps.metrics.unknownOutcome(write.implementation.contract.address, handoff.reason);
      deps.logger.warn(
        { ...write.logContext, idempotency_key: key, handoff_id: handoff.handoff_id, reason: handoff.reason },
        'outcome unknown; handed to an operator',
      );
    },
  };
}
