import { randomUUID } from 'node:crypto';
import { canonicalJson, toolError } from '@gatehouse/contracts';
import type { Catalog, ExecutionContext, ToolError, ToolImplementation } from '@gatehouse/contracts';
import type { OperatorHandoff } from '@gatehouse/events';
import type { KeyedWrite, WriteOutcome } from './keyed-write.js';

// What a write whose outcome is ambiguous goes through: the status query of its system of record,
// and, when no one can tell, an operator.

/** What a write's status query established: applied (with its result), not applied (with the error), or nothing. */
export type StatusFinding =
  | { readonly kind: 'succeeded'; readonly canonicalResult: string }
  | { readonly kind: 'failed'; readonly error: ToolError }
  | { readonly kind: 'unknown'; readonly statusDown: boolean; readonly detail: string };

/**
 * Whether a write whose outcome the status query could not tell is sent again under its key: the
 * system of record answered and does not know the key, and it honours the key, so a second send
 * applies the write at most once (one still in flight there is waited for and its answer replayed).
 */
export function resendableUnderKey(implementation: ToolImplementation, finding: StatusFinding): boolean {
  return finding.kind === 'unknown' && !finding.statusDown && implementation.contract.honoursIdempotencyKey === true;
}

const ASKS = 3;
const PAUSE_MS = 250;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Asks the tool's status query what happened under the key. A few asks a short pause apart, since
 * a write still in flight at the service can land after the first ask. Each ask gets a live deadline
 * of its own (the tool's timeout): the write's signal may have fired already — that is often why we
 * ask — and a status query that honours its signal must still be able to answer. One that is still
 * running at its deadline is abandoned and counts as a failed ask: a query that ignores its signal
 * must not hold the write, its slots and its resource's lock for ever. Nothing is invented: when the
 * service cannot tell (or cannot be asked), the outcome is unknown.
 */
export async function askStatusQuery(
  implementation: ToolImplementation,
  key: string,
  context: Omit<ExecutionContext, 'signal'>,
  catalog: Catalog,
): Promise<StatusFinding> {
  if (implementation.status === undefined) return { kind: 'unknown', statusDown: false, detail: 'the tool has no status query' };
  let detail = 'not asked';
  let statusDown = false;
  for (let ask = 0; ask < ASKS; ask += 1) {
    if (ask > 0) await sleep(PAUSE_MS);
    try {
      const answer = await askOnce(implementation, key, context);
      statusDown = false;
      if (answer.state === 'succeeded') {
        const valid = catalog.validateOutput(implementation.contract, answer.result);
        if (!valid.ok) return { kind: 'failed', error: valid.error };
        return { kind: 'succeeded', canonicalResult: canonicalJson(valid.value) };
      }
      if (answer.state === 'failed') return { kind: 'failed', error: answer.error };
      detail = 'the system of record does not know the key';
    } catch (error) {
      statusDown = true;
      detail = `the status query failed: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  return { kind: 'unknown', statusDown, detail };
}

/** One ask, under the tool's timeout: its signal fires then, and an ask still running is abandoned. */
async function askOnce(implementation: ToolImplementation, key: string, context: Omit<ExecutionContext, 'signal'>) {
  if (implementation.status === undefined) throw new Error('the tool has no status query');
  const timeoutMs = implementation.contract.timeoutMs;
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const abandoned = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([implementation.status(key, { ...context, signal: controller.signal }), abandoned]);
  } finally {
    clearTimeout(timer);
  }
}

/** What the status query established, as the write's outcome; one no one can tell is handed to an operator. */
export async function outcomeFromStatus(
  write: KeyedWrite,
  finding: StatusFinding,
  lastError: string,
  reason: string,
  durationMs: number | null = null,
): Promise<WriteOutcome> {
  const { deps, key, logContext } = write;
  if (finding.kind === 'succeeded') {
    return {
      kind: 'applied',
      result: finding.canonicalResult,
      durationMs,
      note: () =>
        deps.logger.info({ ...logContext, idempotency_key: key, settled: 'succeeded' }, 'ambiguous write settled by the status query'),
    };
  }
  if (finding.kind === 'failed') {
    return {
      kind: 'failed',
      error: finding.error,
      durationMs,
      reopensProposal: false,
      note: () =>
        deps.logger.info(
          { ...logContext, idempotency_key: key, settled: 'failed', code: finding.error.code },
          'ambiguous write settled by the status query',
        ),
    };
  }
  return handOffToOperator(write, finding, lastError, reason, durationMs);
}

/**
 * A write whose outcome no one can establish, handed to people: an `OperatorHandoff` on
 * gatehouse.operator (reason `status_unavailable` when the status query could not be asked), and
 * the outcome that answers the agent `OUTCOME_UNKNOWN`.
 */
async function handOffToOperator(
  write: KeyedWrite,
  finding: Extract<StatusFinding, { kind: 'unknown' }>,
  lastError: string,
  reason: string,
  durationMs: number | null,
): Promise<WriteOutcome> {
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
  return {
    kind: 'unknown',
    error: toolError('OUTCOME_UNKNOWN', 'The write may or may not have happened; an operator has been asked to establish it', {
      details: { handoff_id: handoff.handoff_id, idempotency_key: key },
    }),
    durationMs,
    note: () => {
      deps.metrics.unknownOutcome(write.implementation.contract.address, handoff.reason);
      deps.logger.warn(
        { ...write.logContext, idempotency_key: key, handoff_id: handoff.handoff_id, reason: handoff.reason },
        'outcome unknown; handed to an operator',
      );
    },
  };
}
