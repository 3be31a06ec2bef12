import type { PendingApproval, ToolErrorEvent, ToolResult } from '@gatehouse/events';

/**
 * What a tool call ends in. Results are untrusted content even when they come from the tenant's own
 * systems: `content: 'untrusted_data'` marks them, and the model adapters keep them apart from
 * instructions.
 */
export type CallResult<T = unknown> =
  | {
      readonly ok: true;
      readonly commandId: string;
      readonly tool: string;
      readonly operationId: string | null;
      readonly result: T;
      readonly content: 'untrusted_data';
      readonly durationMs: number | null;
    }
  | {
      readonly ok: false;
      readonly commandId: string;
      readonly tool: string;
      /** `unknown` when the outcome of a write could not be established (OUTCOME_UNKNOWN). */
      readonly status: 'error' | 'unknown';
      readonly error: CallError;
    };

export interface CallError {
  readonly code: string;
  readonly message: string;
  readonly retryable: boolean;
  readonly field: string | null;
  readonly permitted: readonly string[];
  readonly next: string | null;
  readonly retryAfterMs: number | null;
  readonly details: unknown;
}

export type PendingNotice = PendingApproval & { readonly commandId: string };

function parseDetails(details: string | null): unknown {
  if (details === null) return null;
  try {
    return JSON.parse(details) as unknown;
  } catch {
    return details;
  }
}

export function toCallError(error: ToolErrorEvent): CallError {
  return {
    code: error.code,
    message: error.message,
    retryable: error.retryable,
    field: error.field,
    permitted: error.permitted,
    next: error.next,
    retryAfterMs: error.retry_after_ms,
    details: parseDetails(error.details),
  };
}

/** Turns a terminal result event into the caller's view; undefined for a non-terminal one. */
export function toCallResult<T>(event: ToolResult): CallResult<T> | undefined {
  if (event.status === 'pending_approval') return undefined;
  if (event.status === 'ok') {
    return {
      ok: true,
      commandId: event.command_id,
      tool: event.tool,
      operationId: event.operation_id,
      result: JSON.parse(event.result ?? 'null') as T,
      content: 'untrusted_data',
      durationMs: event.duration_ms,
    };
  }
  const error = event.error ?? {
    code: 'UPSTREAM_ERROR',
    message: 'result carried no error',
    retryable: false,
    field: null,
    permitted: [],
    next: null,
    retry_after_ms: null,
    details: null,
  };
  return { ok: false, commandId: event.command_id, tool: event.tool, status: event.status, error: toCallError(error) };
}
