import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Attributes, Context, Span, Tracer, TracerProvider } from '@opentelemetry/api';
import { contextOf } from './trace-context.js';
import type { RecordHeaders } from './trace-context.js';

/**
 * The attributes of Gatehouse's spans: ids, the tool and how the call ended. Never an argument or
 * a result: `gatehouse.arguments_sha256` stands for the arguments.
 */
export const SPAN_ATTRIBUTES = {
  tool: 'gatehouse.tool',
  toolName: 'gatehouse.tool.name',
  toolVersion: 'gatehouse.tool.version',
  tenant: 'gatehouse.tenant',
  runId: 'gatehouse.run_id',
  commandId: 'gatehouse.command_id',
  argumentsSha256: 'gatehouse.arguments_sha256',
  proposalId: 'gatehouse.proposal_id',
  status: 'gatehouse.status',
  errorCode: 'gatehouse.error_code',
  decision: 'gatehouse.decision',
} as const;

/** A span and the context that makes it the parent of what it causes. */
export interface SpanScope {
  readonly span: Span;
  readonly context: Context;
}

/** What identifies the call a span is part of. */
export interface CallIds {
  readonly tool: string;
  readonly tenant: string;
  readonly run_id: string;
  readonly command_id: string;
  readonly arguments_sha256?: string | null | undefined;
}

/** How the part of a call a span covers ended: a result status and, for an error, its code. */
export interface SpanOutcome {
  readonly status?: string | undefined;
  readonly code?: string | undefined;
}

const ADDRESS = /^(.+)\.v([0-9]+)$/;

/**
 * The tracer of one Gatehouse component (`policy`, `executor`…): a no-op one while no provider is
 * registered. It follows the provider of the moment, so a process that stops exporting and starts
 * again (its last client closed, a new one made) exports through the new provider.
 */
export function tracerFor(component: string): Tracer {
  const name = `gatehouse.${component}`;
  let provider: TracerProvider | undefined;
  let tracer: Tracer | undefined;
  const current = (): Tracer => {
    // The API replaces its provider object when tracing is disabled, so identity tells a new one.
    const now = trace.getTracerProvider();
    if (now !== provider || tracer === undefined) {
      provider = now;
      tracer = now.getTracer(name);
    }
    return tracer;
  };
  return {
    startSpan: (spanName, options, context) => current().startSpan(spanName, options, context),
    startActiveSpan: ((...args: Parameters<Tracer['startActiveSpan']>) => current().startActiveSpan(...args)) as Tracer['startActiveSpan'],
  };
}

function callAttributes(ids: CallIds): Attributes {
  const address = ADDRESS.exec(ids.tool);
  const attributes: Attributes = {
    [SPAN_ATTRIBUTES.tool]: ids.tool,
    [SPAN_ATTRIBUTES.tenant]: ids.tenant,
    [SPAN_ATTRIBUTES.runId]: ids.run_id,
    [SPAN_ATTRIBUTES.commandId]: ids.command_id,
  };
  if (address?.[1] !== undefined && address[2] !== undefined) {
    attributes[SPAN_ATTRIBUTES.toolName] = address[1];
    attributes[SPAN_ATTRIBUTES.toolVersion] = Number(address[2]);
  }
  if (typeof ids.arguments_sha256 === 'string') attributes[SPAN_ATTRIBUTES.argumentsSha256] = ids.arguments_sha256;
  return attributes;
}

function scoped(tracer: Tracer, name: string, kind: SpanKind, parent: Context, ids: CallIds | undefined): SpanScope {
  const span = tracer.startSpan(name, { kind }, parent);
  // Attributes are built only for a span that records them: with tracing off this is the whole cost.
  if (ids !== undefined && span.isRecording()) span.setAttributes(callAttributes(ids));
  return { span, context: trace.setSpan(parent, span) };
}

/** The span of a call made by the agent runtime: a child of the caller's trace context, or a new trace. */
export function startCallSpan(tracer: Tracer, name: string, parent: Context | undefined, ids: CallIds): SpanScope {
  return scoped(tracer, name, SpanKind.CLIENT, parent ?? ROOT_CONTEXT, ids);
}

/** The span of a service handling one record: a child of the trace context the record carries. */
export function startRecordSpan(tracer: Tracer, name: string, headers: RecordHeaders | undefined, ids: CallIds): SpanScope {
  return scoped(tracer, name, SpanKind.CONSUMER, contextOf(headers), ids);
}

/**
 * The span of a request a service answers (SERVER): a child of the caller's `traceparent`, or a new
 * trace. `attributes` runs only for a span that records them.
 */
export function startServerSpan(tracer: Tracer, name: string, traceparent: string | undefined, attributes: () => Attributes): SpanScope {
  const parent = traceparent === undefined ? ROOT_CONTEXT : contextOf({ traceparent });
  const span = tracer.startSpan(name, { kind: SpanKind.SERVER }, parent);
  if (span.isRecording()) span.setAttributes(attributes());
  return { span, context: trace.setSpan(parent, span) };
}

/** A span inside another (a tool's handler within its execution). */
export function startChildSpan(tracer: Tracer, name: string, parent: SpanScope, ids?: CallIds): SpanScope {
  return scoped(tracer, name, SpanKind.INTERNAL, parent.context, ids);
}

/** Adds attributes to a span that records them; `build` runs only then. */
export function annotateSpan(span: Span, build: () => Attributes): void {
  if (span.isRecording()) span.setAttributes(build());
}

/** Records on a span how the part of the call it covers ended; an error code marks the span an error. */
export function noteOutcome(span: Span, outcome: SpanOutcome): void {
  if (!span.isRecording()) return;
  if (outcome.status !== undefined) span.setAttribute(SPAN_ATTRIBUTES.status, outcome.status);
  if (outcome.code !== undefined) {
    span.setAttribute(SPAN_ATTRIBUTES.errorCode, outcome.code);
    // The code, never the message: a handler's message may quote what it was given.
    span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.code });
  }
}

/** Records how the part of the call a span covers ended (see noteOutcome), and ends it. */
export function endSpan(span: Span, outcome: SpanOutcome = {}): void {
  noteOutcome(span, outcome);
  span.end();
}

/** Notes on a span how it ended when it was left by an exception: its error name, never its message. */
export function endSpanThrown(span: Span, error: unknown): void {
  if (span.isRecording()) {
    const name = error instanceof Error ? error.name : typeof error;
    span.setAttribute('error.type', name);
    span.setStatus({ code: SpanStatusCode.ERROR, message: name });
  }
  span.end();
}
