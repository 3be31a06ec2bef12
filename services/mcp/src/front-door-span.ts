import { annotateSpan, endSpan, startServerSpan, traceHeadersOf, tracerFor } from '@gatehouse/telemetry';
import { isTraceparent } from './front-door.js';

const tracer = tracerFor('mcp');

/** The front door's span of one MCP request, and the trace context its Kafka command carries on. */
export interface FrontDoorSpan {
  /** The span's own context as a `traceparent`: the call's command is its child. */
  readonly traceparent: string | undefined;
  /** Ends the span; an error code (never a message) marks it an error. */
  end(errorCode?: string): void;
}

export interface FrontDoorSpanInput {
  /** The client's trace context: `_meta.traceparent`, else the request's `traceparent` header. */
  readonly traceparent: unknown;
  readonly protocolVersion: unknown;
  readonly requestId: string | number;
}

/**
 * A SERVER span named and attributed as OpenTelemetry's MCP semantic conventions have it:
 * `{mcp.method.name} {target}`, with the method, the tool, the protocol version and the JSON-RPC
 * request id. Never the arguments or the result.
 */
export function startFrontDoorSpan(method: string, target: string | undefined, input: FrontDoorSpanInput): FrontDoorSpan {
  const { span, context } = startServerSpan(
    tracer,
    target === undefined ? method : `${method} ${target}`,
    isTraceparent(input.traceparent) ? input.traceparent : undefined,
    () => ({
      'mcp.method.name': method,
      'jsonrpc.request.id': String(input.requestId),
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
      ...(typeof input.protocolVersion === 'string' ? { 'mcp.protocol.version': input.protocolVersion } : {}),
      ...(method === 'tools/call' && target !== undefined ? { 'gen_ai.tool.name': target, 'gen_ai.operation.name': 'execute_tool' } : {}),
    }),
  );
  return {
    traceparent: traceHeadersOf(context).traceparent,
    end: (errorCode) => {
      if (errorCode !== undefined) annotateSpan(span, () => ({ 'error.type': errorCode }));
      endSpan(span, errorCode === undefined ? {} : { code: errorCode });
    },
  };
}
