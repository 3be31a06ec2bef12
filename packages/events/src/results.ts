import type { ToolError } from '@gatehouse/contracts';
import type { PendingApproval, ToolCommand, ToolErrorEvent, ToolResult } from './event-types.js';

/** Who a result answers: the command's ids as they travel on every later event. */
export interface ResultAddress {
  readonly command_id: string;
  readonly run_id: string;
  readonly tenant: string;
  readonly tool: string;
}

export function addressOf(command: ToolCommand): ResultAddress {
  return { command_id: command.command_id, run_id: command.run_id, tenant: command.tenant, tool: command.tool };
}

/**
 * The wire encoding of a ToolError (Avro `ToolErrorEvent`): camelCase becomes snake_case, an absent
 * optional field becomes `null` (`permitted`: `[]`), and `details` travels as JSON text. The client's
 * `toCallError` is the inverse, so a handler's ToolError comes back as the same structure.
 */
export function toErrorEvent(error: ToolError): ToolErrorEvent {
  return {
    code: error.code,
    message: error.message,
    retryable: error.retryable,
    field: error.field ?? null,
    permitted: error.permitted ?? [],
    next: error.next ?? null,
    retry_after_ms: error.retryAfterMs ?? null,
    details: error.details === undefined ? null : JSON.stringify(error.details),
  };
}

interface ResultExtras {
  readonly operationId?: string | null;
  readonly argumentsSha256?: string | null;
  readonly durationMs?: number | null;
  readonly completedAt?: number;
}

function base(address: ResultAddress, extras: ResultExtras): Omit<ToolResult, 'status' | 'result' | 'error' | 'pending'> {
  return {
    schema_version: 1,
    command_id: address.command_id,
    run_id: address.run_id,
    tenant: address.tenant,
    tool: address.tool,
    operation_id: extras.operationId ?? null,
    arguments_sha256: extras.argumentsSha256 ?? null,
    completed_at: extras.completedAt ?? Date.now(),
    duration_ms: extras.durationMs ?? null,
  };
}

export function okResult(address: ResultAddress, canonicalResult: string, extras: ResultExtras = {}): ToolResult {
  return { ...base(address, extras), status: 'ok', result: canonicalResult, error: null, pending: null };
}

export function errorResult(address: ResultAddress, error: ToolError, extras: ResultExtras = {}): ToolResult {
  const status = error.code === 'OUTCOME_UNKNOWN' ? 'unknown' : 'error';
  return { ...base(address, extras), status, result: null, error: toErrorEvent(error), pending: null };
}

export function pendingResult(address: ResultAddress, pending: PendingApproval, extras: ResultExtras = {}): ToolResult {
  return { ...base(address, extras), status: 'pending_approval', result: null, error: null, pending };
}
