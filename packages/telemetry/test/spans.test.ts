import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import {
  carriedHeaders,
  endSpan,
  endSpanThrown,
  startCallSpan,
  startChildSpan,
  startRecordSpan,
  traceIdOf,
  tracerFor,
} from '@gatehouse/telemetry';

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const IDS = { tool: 'get_customer.v3', tenant: 'acme', run_id: 'run-1', command_id: 'cmd-1', arguments_sha256: 'a'.repeat(64) };

function recorded() {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  return { tracer: provider.getTracer('test'), exporter };
}

describe('Gatehouse spans', () => {
  it('makes the span of a record a child of the trace context the record carries, with the call’s ids', () => {
    const { tracer, exporter } = recorded();
    const scope = startRecordSpan(tracer, 'policy get_customer.v3', { traceparent: Buffer.from(TRACEPARENT) }, IDS);
    const child = startChildSpan(tracer, 'handler get_customer.v3', scope, IDS);
    endSpan(child.span, { status: 'ok' });
    endSpan(scope.span, { status: 'error', code: 'INVALID_ARGUMENT' });
    const [handler, policy] = exporter.getFinishedSpans();
    expect(policy?.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(policy?.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(policy?.kind).toBe(SpanKind.CONSUMER);
    expect(policy?.attributes).toEqual({
      'gatehouse.tool': 'get_customer.v3',
      'gatehouse.tool.name': 'get_customer',
      'gatehouse.tool.version': 3,
      'gatehouse.tenant': 'acme',
      'gatehouse.run_id': 'run-1',
      'gatehouse.command_id': 'cmd-1',
      'gatehouse.arguments_sha256': 'a'.repeat(64),
      'gatehouse.status': 'error',
      'gatehouse.error_code': 'INVALID_ARGUMENT',
    });
    expect(policy?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'INVALID_ARGUMENT' });
    expect(handler?.parentSpanContext?.spanId).toBe(policy?.spanContext().spanId);
    expect(handler?.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('carries the handling span onward, so what a record causes is its child', () => {
    const { tracer } = recorded();
    const scope = startRecordSpan(tracer, 'execute get_customer.v3', { traceparent: TRACEPARENT }, IDS);
    const carried = carriedHeaders({ traceparent: TRACEPARENT }, undefined, scope.context);
    expect(carried?.['traceparent']).toBe(`00-0af7651916cd43dd8448eb211c80319c-${scope.span.spanContext().spanId}-01`);
    expect(traceIdOf(carried)).toBe('0af7651916cd43dd8448eb211c80319c');
    scope.span.end();
  });

  it('starts a new trace for a call made outside one, and records an exception by its name only', () => {
    const { tracer, exporter } = recorded();
    const { span } = startCallSpan(tracer, 'call get_customer.v3', undefined, IDS);
    endSpanThrown(span, new TypeError('customer Jane Doe at 1 Secret Street'));
    const [call] = exporter.getFinishedSpans();
    expect(call?.parentSpanContext).toBeUndefined();
    expect(call?.kind).toBe(SpanKind.CLIENT);
    expect(call?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'TypeError' });
    expect(JSON.stringify(call?.attributes)).not.toContain('Secret');
  });

  it('records nothing and builds no attributes with no provider registered, and still carries the caller’s context', () => {
    const scope = startRecordSpan(tracerFor('policy'), 'policy get_customer.v3', { traceparent: TRACEPARENT, tracestate: 'v=1' }, IDS);
    expect(scope.span.isRecording()).toBe(false);
    expect(carriedHeaders({ traceparent: TRACEPARENT, tracestate: 'v=1' }, undefined, scope.context)).toEqual({
      traceparent: TRACEPARENT,
      tracestate: 'v=1',
    });
    endSpan(scope.span, { code: 'TIMEOUT' });
    const root = startCallSpan(tracerFor('client'), 'call get_customer.v3', undefined, IDS);
    expect(root.span.spanContext().traceId).toBe('0'.repeat(32));
  });
});
