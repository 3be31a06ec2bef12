import { canonicalJson, isToolFailure, toolError, ToolFailure } from '@gatehouse/contracts';
import type { KeyedWrite, WriteOutcome } from './keyed-write.js';
import { askStatusQuery, outcomeFromStatus, resendableUnderKey } from './status-query.js';

// What one send of a write came back with, in terms of the write: the handler's answer checked
// against the contract, or its failure read as nothing applied, refused, or ambiguous (then the
// system of record's status query says which, or that the write may be sent again).

const VERSION_CONFLICT = 'VERSION_CONFLICT';

/** The handler answered: the write happened. Its answer is checked against the contract before anything leaves. */
export function outcomeOfAnswer(write: KeyedWrite, raw: unknown, started: number): WriteOutcome {
  const { deps, logContext } = write;
  const tool = write.implementation.contract;
  const valid = deps.catalog.validateOutput(tool, raw);
  if (!valid.ok) {
    // The write happened; its answer does not match the contract. Report that, never the raw answer.
    deps.metrics.outputViolation(tool.address, valid.error.code);
    return { kind: 'failed', error: valid.error, durationMs: Date.now() - started, reopensProposal: false };
  }
  const ms = Date.now() - started;
  return {
    kind: 'applied',
    result: canonicalJson(valid.value),
    durationMs: ms,
    note: () => deps.logger.info({ ...logContext, operation_id: write.operationId, idempotency_key: write.key, ms }, 'write applied'),
  };
}

/**
 * The handler failed. A failure that is not ambiguous says what the system of record did (nothing
 * applied); an ambiguous one (a timeout, a lost connection, an unexpected throw) goes to the status
 * query, and one the system of record turns out not to know is sent again (`resend`) while sends remain.
 */
export async function outcomeOfFailure(
  write: KeyedWrite,
  error: unknown,
  started: number,
  mayResend: boolean,
): Promise<WriteOutcome | 'resend'> {
  const { deps, logContext, key } = write;
  const tool = write.implementation.contract;
  const failure = isToolFailure(error) ? error : new ToolFailure(toolError('UPSTREAM_ERROR', 'handler failed'), { ambiguous: true });
  if (failure.ambiguous) {
    const finding = await askStatusQuery(write.implementation, key, write.statusContext, deps.catalog);
    if (mayResend && Date.now() < write.deadline && resendableUnderKey(write.implementation, finding)) {
      deps.logger.info(
        { ...logContext, idempotency_key: key, code: failure.error.code },
        'ambiguous write unknown to its system of record; sending it again under its key',
      );
      return 'resend';
    }
    return outcomeFromStatus(
      write,
      finding,
      failure.error.message,
      failure.error.code === 'TIMEOUT' ? 'timeout' : 'ambiguous_answer',
      Date.now() - started,
    );
  }
  const durationMs = Date.now() - started;
  if (failure.error.retryable) {
    // The system of record refused before applying anything (a 503 while it stops, say), and
    // says an identical call may succeed: that must be true.
    return {
      kind: 'not_applied',
      error: failure.error,
      durationMs,
      reopensProposal: true,
      note: () =>
        deps.logger.info(
          { ...logContext, code: failure.error.code, idempotency_key: key },
          'write refused by the system of record; nothing applied, the key is free for a retry',
        ),
    };
  }
  const conflict = failure.error.code === VERSION_CONFLICT;
  if (conflict) deps.metrics.versionConflict(tool.address);
  return {
    kind: 'failed',
    error: failure.error,
    durationMs,
    reopensProposal: conflict,
    note: () =>
      deps.logger.info({ ...logContext, code: failure.error.code, idempotency_key: key }, 'write refused by the system of record'),
  };
}
