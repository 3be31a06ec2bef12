import { toolNameFromMcp } from '@gatehouse/contracts';
import type { McpToolResult } from '@gatehouse/client';
import type { Run } from '@gatehouse/state';
import { startFrontDoorSpan } from './front-door-span.js';
import type { FrontDoorSpan, FrontDoorSpanInput } from './front-door-span.js';
import { callerOf, localError } from './front-door.js';
import type { Caller, FrontDoor, RequestChannel } from './front-door.js';

/** A tools/call as every path begins it: its span, the tool it names, and its caller (with the arguments as sent). */
export interface OpenedCall {
  readonly span: FrontDoorSpan;
  readonly address: string;
  /** Calls the tool with the model's arguments as JSON text, exactly as they arrived. */
  readonly call: Caller;
}

/**
 * Opens a tools/call on any revision's path: starts the front door's span and resolves the MCP name
 * to a tool address. A name that is no Gatehouse tool ends the span and is answered at once with
 * TOOL_NOT_FOUND, as the answer to give.
 */
export function openToolCall(
  run: Run,
  door: FrontDoor,
  name: string,
  args: unknown,
  spanInput: FrontDoorSpanInput,
): { readonly opened: OpenedCall } | { readonly refusal: McpToolResult } {
  const span = startFrontDoorSpan('tools/call', name, spanInput);
  const address = toolNameFromMcp(name);
  if (address === undefined) {
    span.end('TOOL_NOT_FOUND');
    return { refusal: localError('TOOL_NOT_FOUND', `${name} is not a Gatehouse tool name (name_vN); tools/list names the run's tools`) };
  }
  const rawArguments = JSON.stringify(args ?? {});
  return { opened: { span, address, call: callerOf(run, door, address, rawArguments, span.traceparent) } };
}

/** The request's progress channel: the client's `_meta.progressToken` (when it gave a usable one), its notifier and its signal. */
export function progressChannelOf(
  meta: Record<string, unknown> | undefined,
  notify: RequestChannel['notify'],
  signal: AbortSignal,
): RequestChannel {
  const token = meta?.['progressToken'];
  return { progressToken: typeof token === 'string' || typeof token === 'number' ? token : undefined, notify, signal };
}

/** The Gatehouse error code an answer carries, if any: what its span ends with. */
export function errorCodeOf(answer: McpToolResult | Record<string, unknown>): string | undefined {
  if (answer['resultType'] === 'task') return undefined;
  const meta = answer['_meta'] as Record<string, unknown> | undefined;
  return (meta?.['gatehouse/error'] as { code?: string } | undefined)?.code;
}
