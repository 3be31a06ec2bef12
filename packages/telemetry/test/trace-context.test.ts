import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import {
  carriedHeaders,
  carriedHeadersSetter,
  contextOf,
  newTraceparent,
  recordHeadersGetter,
  REPLY_PARTITION_HEADER,
  replyPartitionOf,
  SENT_AT_HEADER,
  sentAtOf,
  traceHeadersOf,
  traceIdOf,
  traceIdOfTraceparent,
} from '@gatehouse/telemetry';
import type { CarriedHeaders } from '@gatehouse/telemetry';

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('trace context', () => {
  it('makes a fresh, well-formed traceparent per call', () => {
    const a = newTraceparent();
    const b = newTraceparent();
    expect(a).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(a.slice(3, 35)).not.toBe(b.slice(3, 35));
    expect(traceIdOf({ traceparent: a })).toBe(a.slice(3, 35));
  });

  it('reads the trace id of a header given as a Buffer', () => {
    expect(traceIdOf({ traceparent: Buffer.from(TRACEPARENT) })).toBe('0af7651916cd43dd8448eb211c80319c');
  });

  it('finds no trace id in a malformed or all-zero traceparent', () => {
    expect(traceIdOf({ traceparent: 'not-a-trace' })).toBeUndefined();
    expect(traceIdOf({ traceparent: `00-${'0'.repeat(32)}-b7ad6b7169203331-01` })).toBeUndefined();
    expect(traceIdOf(undefined)).toBeUndefined();
  });

  it('carries traceparent, tracestate and the send time, and stamps a send time it is given', () => {
    const carried = carriedHeaders({ traceparent: Buffer.from(TRACEPARENT), tracestate: 'v=1', other: 'x', [SENT_AT_HEADER]: '5' }, 1234);
    expect(carried).toEqual({ traceparent: TRACEPARENT, tracestate: 'v=1', [SENT_AT_HEADER]: '1234' });
    expect(sentAtOf(carriedHeaders(carried))).toBe(1234);
  });

  it('drops a malformed traceparent and carries nothing when nothing is left', () => {
    expect(carriedHeaders({ traceparent: 'garbage', tracestate: 'v=1' })).toBeUndefined();
    expect(sentAtOf({ [SENT_AT_HEADER]: '12abc' })).toBeUndefined();
  });

  it('carries the reply partition a command was sent with, and nothing that is not a small number', () => {
    expect(carriedHeaders({ [REPLY_PARTITION_HEADER]: Buffer.from('7') })).toEqual({ [REPLY_PARTITION_HEADER]: '7' });
    expect(replyPartitionOf(carriedHeaders({ traceparent: TRACEPARENT, [REPLY_PARTITION_HEADER]: '12' }))).toBe(12);
    for (const bad of ['-1', '1e3', ' 3', '123456', '', 'x'])
      expect(replyPartitionOf({ [REPLY_PARTITION_HEADER]: bad }), bad).toBeUndefined();
    expect(carriedHeaders({ [REPLY_PARTITION_HEADER]: 'x' })).toBeUndefined();
  });

  it('reads Kafka headers for the propagator: a Buffer as text, a repeated header by its first value', () => {
    const headers = { traceparent: [Buffer.from(TRACEPARENT), 'second'], other: 'x' };
    expect(recordHeadersGetter.get(headers, 'traceparent')).toBe(TRACEPARENT);
    expect(recordHeadersGetter.get(headers, 'missing')).toBeUndefined();
    expect(recordHeadersGetter.keys(headers)).toEqual(['traceparent', 'other']);
    expect(recordHeadersGetter.keys(undefined)).toEqual([]);
    const carrier: CarriedHeaders = {};
    carriedHeadersSetter.set(carrier, 'traceparent', TRACEPARENT);
    expect(carrier).toEqual({ traceparent: TRACEPARENT });
  });

  it('extracts a remote parent from the headers and writes back the same context', () => {
    const context = contextOf({ traceparent: TRACEPARENT, tracestate: 'v=1' });
    expect(trace.getSpanContext(context)).toMatchObject({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      isRemote: true,
    });
    expect(traceHeadersOf(context)).toEqual({ traceparent: TRACEPARENT, tracestate: 'v=1' });
    expect(traceHeadersOf(contextOf({ traceparent: 'garbage' }))).toEqual({});
    expect(traceHeadersOf(contextOf(undefined))).toEqual({});
  });

  it('carries the trace context of the span that handled a record, in place of the record’s own', () => {
    const handling = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: '00f067aa0ba902b7',
      traceFlags: 1,
    });
    const carried = carriedHeaders({ traceparent: TRACEPARENT, [REPLY_PARTITION_HEADER]: '3' }, undefined, handling);
    expect(carried).toEqual({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01', [REPLY_PARTITION_HEADER]: '3' });
  });

  it('keeps an unsampled caller unsampled and reads a traceparent value alone', () => {
    const unsampled = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';
    expect(carriedHeaders({ traceparent: unsampled })).toEqual({ traceparent: unsampled });
    expect(traceIdOfTraceparent(unsampled)).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(traceIdOfTraceparent('00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01')).toBeUndefined();
    expect(traceIdOfTraceparent(undefined)).toBeUndefined();
  });
});
