import { canonicalJson } from '@gatehouse/contracts';
import type { Catalog, ExecutionContext, ToolError, ToolImplementation } from '@gatehouse/contracts';

/** What a write's status query established: applied (with its result), not applied (with the error), or nothing. */
export type StatusFinding =
  | { readonly kind: 'succeeded'; readonly canonicalResult: string }
  | { readonly kind: 'failed'; readonly error: ToolError }
  | { readonly kind: 'unknown'; readonly statusDown: boolean; readonly detail: string };

const ASKS = 3;
const PAUSE_MS = 250;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Asks the tool's status query what happened under the key. A few asks a short pause apart, since
 * a write still in flight at the service can land after the first ask. Each ask gets a live deadline
 * of its own (the tool's timeout): the write's signal may have fired already — that is often why we
 * ask — and a status query that honours its signal must still be able to answer. Nothing is
 * invented: when the service cannot tell (or cannot be asked), the outcome is unknown.
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
      const answer = await implementation.status(key, { ...context, signal: AbortSignal.timeout(implementation.contract.timeoutMs) });
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
