import { isExchangedCredential, isToolFailure, toolError, ToolFailure } from '@gatehouse/contracts';
import type { ExecutionContext, ToolImplementation } from '@gatehouse/contracts';
import { endSpan, startChildSpan, tracerFor } from '@gatehouse/telemetry';
import type { SpanOutcome, SpanScope } from '@gatehouse/telemetry';

/**
 * Runs a handler under its tool's timeout. The handler gets an AbortSignal; one that ignores it is
 * abandoned at the bound all the same. Every failure comes back as a ToolFailure. A token by
 * exchange is had before the handler starts (the exchanger caches it for the handler's own ask): a
 * refused exchange is an answer with nothing sent, never a write that may have happened.
 */
export async function runHandler(
  implementation: ToolImplementation,
  args: unknown,
  context: Omit<ExecutionContext, 'signal'>,
  timeoutMs: number,
): Promise<unknown> {
  if (isExchangedCredential(implementation.credential)) await context.credential();
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const began = Date.now();
  const timedOut = new Promise<never>((_, reject) => {
    // Node runs timers on the loop's cached millisecond clock, so one may fire a millisecond before
    // Date.now() says its delay is up: it is set again for what is left, never answering early.
    const fire = (): void => {
      const left = timeoutMs - (Date.now() - began);
      if (left > 0) {
        timer = setTimeout(fire, left);
        return;
      }
      controller.abort();
      reject(
        new ToolFailure(toolError('TIMEOUT', `${implementation.contract.address} did not finish within ${timeoutMs} ms`), {
          // A write may have happened even though its answer never came.
          ambiguous: implementation.contract.effect === 'write',
        }),
      );
    };
    timer = setTimeout(fire, timeoutMs);
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

const tracer = tracerFor('executor');

/**
 * The implementation with its handler traced: each run is a span under the execution's, ended
 * when the handler settles or its timeout abandons it. With no span recording, the implementation
 * itself (tracing off costs nothing here).
 */
export function tracedImplementation(implementation: ToolImplementation, parent: SpanScope): ToolImplementation {
  if (!parent.span.isRecording()) return implementation;
  // Everything but `run` is the implementation's own (its status query, resource, proposal).
  const traced = Object.create(implementation) as { run: ToolImplementation['run'] };
  traced.run = async (args, context) => {
    const ids = { tool: implementation.contract.address, tenant: context.tenant, run_id: context.runId, command_id: context.commandId };
    const { span } = startChildSpan(tracer, `handler ${implementation.contract.address}`, parent, ids);
    let open = true;
    const end = (outcome: SpanOutcome): void => {
      if (!open) return;
      open = false;
      endSpan(span, outcome);
    };
    const abandoned = (): void => end({ status: 'error', code: 'TIMEOUT' });
    context.signal.addEventListener('abort', abandoned, { once: true });
    try {
      const value = await implementation.run(args, context);
      end({ status: 'ok' });
      return value;
    } catch (error) {
      end({ status: 'error', code: isToolFailure(error) ? error.error.code : 'UPSTREAM_ERROR' });
      throw error;
    } finally {
      context.signal.removeEventListener('abort', abandoned);
    }
  };
  return traced as ToolImplementation;
}
