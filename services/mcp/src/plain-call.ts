import type { IncomingHttpHeaders } from 'node:http';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  classifyInboundRequest,
  isJsonContentType,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import type { McpToolResult } from '@gatehouse/client';
import type { Run } from '@gatehouse/state';
import { answerOrTask, envelopeDeclaresTasks } from './envelope-server.js';
import { serverInfoOf, waitInRequest } from './front-door.js';
import type { FrontDoor } from './front-door.js';
import { errorCodeOf, openToolCall } from './tool-call.js';

/**
 * The one request most traffic is, on either revision: a lone `tools/call` answered with plain JSON
 * (no progress token, no task), which the front door answers without building an SDK server and
 * transport for it. Building them cost ≈ 200 µs of CPU per call on 2025-11-25 and ≈ 420 µs on
 * 2026-07-28 on this project's 2-core machine, more than the rest of the front door's own HTTP work
 * (the figures are in docs/performance.md); the answer is the JSON-RPC response the
 * SDK writes, which a test compares.
 *
 * Only what the SDK would accept as it is takes this path: every header check the SDK's transport
 * makes passes, and the message has exactly the shape of a plain call (no key beyond those). Any
 * other request (a batch, a notification, initialize, a task, progress, an odd field) goes to the
 * SDK, which answers it or refuses it as it always has.
 */
export interface PlainCall {
  readonly id: string | number;
  readonly name: string;
  readonly arguments: Record<string, unknown> | undefined;
  readonly meta: Record<string, unknown> | undefined;
  /** The MCP-Protocol-Version header, when the client sent one. */
  readonly protocolVersion: string | undefined;
  /** Which revision's answer it gets: 2026-07-28 results carry `resultType` and the server's identity. */
  readonly era: 'handshake' | 'envelope';
}

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const PARAM_KEYS = new Set(['name', 'arguments', '_meta']);
// A progress token asks for notifications (an SSE answer); a related task belongs to the task API.
const STREAMED_META = ['progressToken', 'io.modelcontextprotocol/related-task'];

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

const onlyKeys = (value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean =>
  Object.keys(value).every((key) => allowed.has(key));

/** The headers as the SDKs' transports check them: both media types accepted, a JSON body. */
function headersPass(headers: IncomingHttpHeaders): boolean {
  const accept = headers.accept;
  if (accept === undefined || !accept.includes('application/json') || !accept.includes('text/event-stream')) return false;
  return isJsonContentType(headers['content-type'] ?? null);
}

/** A lone tools/call's id and params, when the message is exactly one; never a field more. */
function callShape(
  body: unknown,
): { id: string | number; name: string; args: Record<string, unknown> | undefined; meta: Record<string, unknown> | undefined } | undefined {
  if (!isPlainObject(body) || !onlyKeys(body, REQUEST_KEYS) || body['jsonrpc'] !== '2.0' || body['method'] !== 'tools/call')
    return undefined;
  const id = body['id'];
  if (typeof id !== 'string' && !(typeof id === 'number' && Number.isSafeInteger(id))) return undefined;
  const params = body['params'];
  if (!isPlainObject(params) || !onlyKeys(params, PARAM_KEYS)) return undefined;
  const name = params['name'];
  const args = params['arguments'];
  const meta = params['_meta'];
  if (typeof name !== 'string') return undefined;
  if (args !== undefined && !isPlainObject(args)) return undefined;
  if (meta !== undefined && (!isPlainObject(meta) || STREAMED_META.some((key) => key in meta))) return undefined;
  return { id, name, args, meta };
}

/** The plain call a 2025-11-25 request is, or undefined when the SDK should serve it. */
export function plainToolCall(body: unknown, headers: IncomingHttpHeaders): PlainCall | undefined {
  if (!headersPass(headers)) return undefined;
  const version = headers['mcp-protocol-version'];
  if (version !== undefined && !(typeof version === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(version))) return undefined;
  const shape = callShape(body);
  if (shape === undefined) return undefined;
  return {
    id: shape.id,
    name: shape.name,
    arguments: shape.args,
    meta: shape.meta,
    protocolVersion: typeof version === 'string' ? version : undefined,
    era: 'handshake',
  };
}

const ENVELOPE_REVISION = '2026-07-28';
// What a plain 2026-07-28 call's _meta may hold: the envelope and trace context. Anything else
// (a log level, a subscription) is the SDK's to interpret.
const PLAIN_MODERN_META = new Set([
  PROTOCOL_VERSION_META_KEY,
  CLIENT_INFO_META_KEY,
  CLIENT_CAPABILITIES_META_KEY,
  'traceparent',
  'tracestate',
  'baggage',
]);

/**
 * The plain call a 2026-07-28 request is, or undefined when the SDK should serve it. Its envelope
 * and the Mcp-* headers pass the SDK's own classifier, and the headers name exactly the body's
 * method, tool and revision. A client that declares the Tasks extension gets a task handle for a
 * commit that waits for a person, as from the SDK-served server.
 */
export function plainEnvelopeToolCall(body: unknown, headers: IncomingHttpHeaders): PlainCall | undefined {
  if (!headersPass(headers)) return undefined;
  const shape = callShape(body);
  if (shape?.meta === undefined || !Object.keys(shape.meta).every((key) => PLAIN_MODERN_META.has(key))) return undefined;
  const { 'mcp-protocol-version': version, 'mcp-method': method, 'mcp-name': name } = headers;
  if (
    version !== ENVELOPE_REVISION ||
    method !== 'tools/call' ||
    name !== shape.name ||
    shape.meta[PROTOCOL_VERSION_META_KEY] !== ENVELOPE_REVISION
  )
    return undefined;
  const route = classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: version,
    mcpMethodHeader: method,
    mcpNameHeader: name,
    body,
  });
  if (route.kind !== 'modern' || route.messageKind !== 'request' || route.classification.revision !== ENVELOPE_REVISION) return undefined;
  return { id: shape.id, name: shape.name, arguments: shape.args, meta: shape.meta, protocolVersion: ENVELOPE_REVISION, era: 'envelope' };
}

/**
 * The JSON-RPC result a plain call's answer is on its revision, as the SDK encodes it: on
 * 2026-07-28 with a `resultType` (`complete`, or `task` for a task handle), a content list and the
 * server's identity.
 */
export function plainCallResult(
  call: PlainCall,
  door: FrontDoor,
  answer: McpToolResult | Record<string, unknown>,
): Record<string, unknown> {
  if (call.era === 'handshake') return answer;
  const meta = answer['_meta'] as Record<string, unknown> | undefined;
  // A task handle carries no content of its own; the SDK gives every tools/call result a content list.
  const content = answer['content'] ?? [];
  return {
    content,
    ...answer,
    _meta: { ...meta, [SERVER_INFO_META_KEY]: serverInfoOf(door) },
    resultType: answer['resultType'] ?? 'complete',
  };
}

/** Calls the tool for the run and answers within the request, as the SDK-served tools/call does. */
export async function answerPlainCall(
  run: Run,
  door: FrontDoor,
  call: PlainCall,
  traceparentHeader: string | undefined,
  signal: AbortSignal,
): Promise<McpToolResult | Record<string, unknown>> {
  const opening = openToolCall(run, door, call.name, call.arguments, {
    traceparent: call.meta?.['traceparent'] ?? traceparentHeader,
    protocolVersion: call.protocolVersion,
    requestId: call.id,
  });
  if ('refusal' in opening) return opening.refusal;
  const { span, address, call: caller } = opening.opened;
  const channel = { progressToken: undefined, notify: () => Promise.resolve(), signal };
  const answer =
    call.era === 'envelope' && envelopeDeclaresTasks(call.meta)
      ? await answerOrTask(run, door, address, span.traceparent, caller, channel)
      : await waitInRequest(call.name, caller, channel, door);
  span.end(errorCodeOf(answer));
  return answer;
}
