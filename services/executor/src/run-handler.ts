import { isToolFailure, toolError, ToolFailure } from '@gatehouse/contracts';
import type { ExecutionContext, ToolImplementation } from '@gatehouse/contracts';

/**
 * Runs a handler under its tool's timeout. The handler gets an AbortSignal; one that ignores it is
 * abandoned at the bound all the same. Every failure comes back as a ToolFailure.
 */
export async function runHandler(
  implementation: ToolImplementation,
  args: unknown,
  context: Omit<ExecutionContext, 'signal'>,
  timeoutMs: number,
): Promise<unknown> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(
        new ToolFailure(toolError('TIMEOUT', `${implementation.contract.address} did not finish within ${timeoutMs} ms`), {
          // A write may have happened even though its answer never came.
          ambiguous: implementation.contract.effect === 'write',
        }),
      );
    }, timeoutMs);
  });
  try {
    return await Promise.race([implementation.run(args, { ...context, signal: controller.signal }), timedOut]);
  } catch (error) {
    if (isToolFailure(error)) throw error;
    throw new ToolFailure(toolError('UPSTREAM_ERROR', `${implementation.contract.address} failed unexpectedly`, { retryable: false }), {
      ambiguous: implementation.contract.effect === 'write',
      cause: error,
    });
  } finally {
    clearTimeout(timer);
  }
}
