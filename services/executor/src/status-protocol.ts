import { canonicalJson } from '@gatehouse/contracts';
import type { Catalog, ExecutionContext, ToolError, ToolImplementation } from '@gatehouse/contracts';

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
