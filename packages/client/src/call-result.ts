import { isErrorCode, toolError } from '@gatehouse/contracts';
import type { ToolError, ToolErrorExtras } from '@gatehouse/contracts';
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

/**
 * The error of a failed call: the contracts' ToolError, the structure a handler fails with, with
 * `code` in this client's `ErrorCode` union. Optional fields are absent when the error has none
 * (the wire's `null`, and its empty `permitted` list, come back absent).
 */
export type CallError = ToolError;

/**
 * `details` of an error whose code this client's catalogue does not know (a newer server): the
 * error is returned as `UPSTREAM_ERROR`, and the code and details it was sent with are kept here.
 */
export interface UnknownCodeDetails {
  readonly code: string;
  readonly details?: unknown;
}

export type PendingNotice = PendingApproval & { readonly commandId: string };

/** The wire's JSON text of `details`; text that is not JSON (a producer outside Gatehouse) stays text. */
function parseDetails(details: string): unknown {
  try {
    return JSON.parse(details) as unknown;
  } catch {
    return details;
  }
}

/** The inverse of the events' `toErrorEvent`: the wire's ToolErrorEvent back into a ToolError. */
export function toCallError(event: ToolErrorEvent): CallError {
  const extras: ToolErrorExtras = {
    retryable: event.retryable,
    field: event.field ?? undefined,
    permitted: event.permitted.length === 0 ? undefined : event.permitted,
    next: event.next ?? undefined,
    retryAfterMs: event.retry_after_ms ?? undefined,
    details: event.details === null ? undefined : parseDetails(event.details),
  };
  if (isErrorCode(event.code)) return toolError(event.code, event.message, extras);
  const unknown: UnknownCodeDetails = extras.details === undefined ? { code: event.code } : { code: event.code, details: extras.details };
  return toolError('UPSTREAM_ERROR', event.message, { ...extras, details: unknown });
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
  const error =
    event.error === null ? toolError('UPSTREAM_ERROR', 'result carried no error', { retryable: false }) : toCallError(event.error);
  return { ok: false, commandId: event.command_id, tool: event.tool, status: event.status, error };
}
