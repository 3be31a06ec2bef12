import { toolError } from '@gatehouse/contracts';
import type { ToolImplementation } from '@gatehouse/contracts';
import { errorResult } from '@gatehouse/events';
import type { ExecutionOrder } from '@gatehouse/events';
import type { Answer } from './executor-ports.js';
import type { KeyedWrite, WritePathDeps, WriteRecord } from './keyed-write.js';
import { addressOf, logContextOf, orderContext, ownerToken, writeOperationId } from './order-context.js';
import { holdWriteKey } from './write-claim.js';
import { settle } from './write-path.js';
import { proveWrite } from './write-proof.js';
import { runUnderSlots } from './write-run.js';

/**
 * A write, at most once, answered once through `answer` (which stages, publishes and records this
 * command's one answer). One pipeline: claim the idempotency key (a stored answer answers any
 * retry; a key whose owner died goes to the status query, never a blind re-run) → prove the
 * approval and consume it with the proposal → take the tenant and run slots and the resource's
 * lock → run, settling any ambiguous answer through the status query or an operator → settle. Each
 * step says what it found (a WriteOutcome); only `settle` (`write-path.ts`) decides what the key keeps,
 * and it is the pipeline's last step.
 */
export async function executeWrite(
  order: ExecutionOrder,
  implementation: ToolImplementation,
  record: WriteRecord,
  deps: WritePathDeps,
  answer: Answer,
): Promise<void> {
  if (order.idempotency_key === null) {
    const error = toolError('IDEMPOTENCY_KEY_MISSING', 'A write reached the executor without an idempotency key');
    await answer(errorResult(addressOf(order), error, { argumentsSha256: order.arguments_sha256 }));
    return;
  }
  const write = keyedWrite(order, implementation, order.idempotency_key, record, deps, answer);
  const hold = await holdWriteKey(write);
  try {
    let outcome = hold.outcome;
    if (outcome === undefined) {
      const proof = await proveWrite(write);
      outcome = proof.ok ? await runUnderSlots(write, proof.args) : proof.refusal;
    }
    await settle(write, outcome);
  } finally {
    hold.letGo();
  }
}

function keyedWrite(
  order: ExecutionOrder,
  implementation: ToolImplementation,
  key: string,
  record: WriteRecord,
  deps: WritePathDeps,
  answer: Answer,
): KeyedWrite {
  const tool = implementation.contract;
  // The same for whichever executor ends up answering: a repeated answer is the same answer.
  const operationId = writeOperationId(key);
  return {
    order,
    implementation,
    key,
    owner: ownerToken(deps.executorId),
    operationId,
    // As this machine's clock reads it: every wait of the write is timed by this machine.
    deadline: order.deadline_at === null ? Date.now() + tool.timeoutMs * 4 : deps.clock.local(order.deadline_at),
    address: addressOf(order),
    logContext: logContextOf(order, record.headers),
    record,
    statusContext: { ...orderContext(order, operationId, key), credential: deps.credentials.forStatus(order, implementation) },
    deps,
    answer,
  };
}
