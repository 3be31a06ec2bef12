import type { ToolResult } from './event-types.js';
import type { ResultAddress } from './results.js';

/** What the idempotency record keeps of a finished write: the result, minus who asked. */
export interface StoredOutcome {
  readonly command_id: string;
  readonly run_id: string;
  readonly tenant: string;
  readonly tool: string;
  /** The record (partition:offset) whose execution produced it: its redelivery is not answered twice. */
  readonly origin: string;
  readonly status: ToolResult['status'];
  readonly operation_id: string | null;
  readonly result: string | null;
  readonly error: ToolResult['error'];
  readonly duration_ms: number | null;
  /** When the result was produced: a repeated answer says the same (absent in records stored before it was kept). */
  readonly completed_at?: number;
  /**
   * The headers the command's events carried (trace context, reply partition), so an answer given
   * later — an operator's resolution — reaches the same trace and the asking instance's partition.
   */
  readonly headers?: Readonly<Record<string, string>>;
}

export function toStoredOutcome(result: ToolResult, origin: string, headers?: Readonly<Record<string, unknown>>): string {
  const outcome: StoredOutcome = {
    command_id: result.command_id,
    run_id: result.run_id,
    tenant: result.tenant,
    tool: result.tool,
    origin,
    status: result.status,
    operation_id: result.operation_id,
    result: result.result,
    error: result.error,
    duration_ms: result.duration_ms,
    completed_at: result.completed_at,
    ...(headers === undefined ? {} : { headers: textHeaders(headers) }),
  };
  return JSON.stringify(outcome);
}

function textHeaders(headers: Readonly<Record<string, unknown>>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (typeof value === 'string') kept[name] = value;
  return kept;
}

/**
 * The stored result, answered to the command that asks now (a retry carries a new command id). For
 * the command that produced it, the answer is the same record again, byte for byte.
 */
export function fromStoredOutcome(
  text: string,
  address: ResultAddress,
  argumentsSha256: string,
): { outcome: StoredOutcome; result: ToolResult } {
  const outcome = JSON.parse(text) as StoredOutcome;
  return {
    outcome,
    result: {
      schema_version: 1,
      command_id: address.command_id,
      run_id: address.run_id,
      tenant: address.tenant,
      tool: address.tool,
      status: outcome.status,
      operation_id: outcome.operation_id,
      result: outcome.result,
      error: outcome.error,
      pending: null,
      arguments_sha256: argumentsSha256,
      completed_at: outcome.completed_at ?? Date.now(),
      duration_ms: outcome.duration_ms,
    },
  };
}
