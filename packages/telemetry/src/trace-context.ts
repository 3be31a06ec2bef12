import { randomBytes } from 'node:crypto';
import { isSpanContextValid, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import type { Context, TextMapGetter, TextMapSetter } from '@opentelemetry/api';
import { parseTraceParent, W3CTraceContextPropagator } from '@opentelemetry/core';

/** Kafka record headers by name, as @gatehouse/events reads them, without depending on it. */
export type RecordHeaders = Readonly<Record<string, Buffer | string | readonly (Buffer | string)[] | undefined>>;

/** Headers a service copies from the record it handles to every event that record causes. */
export type CarriedHeaders = Record<string, string>;

export const TRACEPARENT_HEADER = 'traceparent';
export const TRACESTATE_HEADER = 'tracestate';
/** When the runtime sent the command (epoch ms, decimal), set by the policy service from `sent_at`. */
export const SENT_AT_HEADER = 'gatehouse-sent-at';
/**
 * The results partition the agent-runtime instance behind a command reads (decimal), set by the
 * client; every result the command causes is published to that partition.
 */
export const REPLY_PARTITION_HEADER = 'gatehouse-reply-partition';

// W3C Trace Context is read and written by OpenTelemetry's propagator (version handling, the
// all-zero ids, tracestate's limits); Gatehouse only adapts Kafka headers to it.
const propagator = new W3CTraceContextPropagator();

function text(value: RecordHeaders[string]): string | undefined {
  const first = Array.isArray(value) ? (value as readonly (Buffer | string)[])[0] : (value as Buffer | string | undefined);
  if (first === undefined) return undefined;
  return typeof first === 'string' ? first : first.toString('utf8');
}

/** Reads Kafka record headers for the propagator: a Buffer is UTF-8 text, a repeated header its first value. */
export const recordHeadersGetter: TextMapGetter<RecordHeaders | undefined> = {
  keys: (carrier) => (carrier === undefined ? [] : Object.keys(carrier)),
  get: (carrier, key) => text(carrier?.[key]),
};

/** Writes the propagator's fields into the headers an event is published with. */
export const carriedHeadersSetter: TextMapSetter<CarriedHeaders> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/** The trace context a record carries (a remote parent), or the root context when it carries none that is valid. */
export function contextOf(headers: RecordHeaders | undefined): Context {
  return headers === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, headers, recordHeadersGetter);
}

/** The `traceparent` (and `tracestate`) naming the span of `context`; empty when it holds no valid span. */
export function traceHeadersOf(context: Context): CarriedHeaders {
  const headers: CarriedHeaders = {};
  propagator.inject(context, headers, carriedHeadersSetter);
  return headers;
}

/** A fresh `traceparent` (version 00, sampled) for a call that starts a trace while no tracer records it. */
export function newTraceparent(): string {
  for (;;) {
    const spanContext = {
      traceId: randomBytes(16).toString('hex'),
      spanId: randomBytes(8).toString('hex'),
      traceFlags: TraceFlags.SAMPLED,
    };
    if (!isSpanContextValid(spanContext)) continue;
    const traceparent = traceHeadersOf(trace.setSpanContext(ROOT_CONTEXT, spanContext))[TRACEPARENT_HEADER];
    if (traceparent !== undefined) return traceparent;
  }
}

/** The trace id of a well-formed `traceparent` header value; undefined for anything else. */
export function traceIdOfTraceparent(traceparent: string | undefined): string | undefined {
  // The propagator's own parser, without building a context: this runs for every log line's trace id.
  const spanContext = traceparent === undefined ? null : parseTraceParent(traceparent);
  return spanContext !== null && isSpanContextValid(spanContext) ? spanContext.traceId : undefined;
}

/** The trace id a record carries, for log lines; undefined when it carries no valid `traceparent`. */
export function traceIdOf(headers: RecordHeaders | undefined): string | undefined {
  return traceIdOfTraceparent(text(headers?.[TRACEPARENT_HEADER]));
}

/** When the command behind a record was sent (epoch ms), if the policy service stamped it. */
export function sentAtOf(headers: RecordHeaders | undefined): number | undefined {
  const raw = text(headers?.[SENT_AT_HEADER]);
  if (raw === undefined || !/^[0-9]{1,15}$/.test(raw)) return undefined;
  return Number(raw);
}

/** The reply partition a record carries; undefined unless it is a small decimal number. */
export function replyPartitionOf(headers: RecordHeaders | undefined): number | undefined {
  const raw = text(headers?.[REPLY_PARTITION_HEADER]);
  if (raw === undefined || !/^[0-9]{1,5}$/.test(raw)) return undefined;
  return Number(raw);
}

/**
 * The headers that travel from a record to every event it causes: the trace context (`traceparent`
 * and `tracestate`), the reply partition and the command's send time. The trace context names the
 * span of `context` when one is given (the span that handled the record, so what it causes are its
 * children) and otherwise the record's own. `sentAt` replaces any carried send time (the policy
 * service stamps it from the command it checked). Undefined when there is nothing to carry.
 */
export function carriedHeaders(headers: RecordHeaders | undefined, sentAt?: number, context?: Context): CarriedHeaders | undefined {
  const carried = traceHeadersOf(context ?? contextOf(headers));
  const replyPartition = replyPartitionOf(headers);
  if (replyPartition !== undefined) carried[REPLY_PARTITION_HEADER] = String(replyPartition);
  const stamp = sentAt ?? sentAtOf(headers);
  if (stamp !== undefined && Number.isSafeInteger(stamp) && stamp >= 0) carried[SENT_AT_HEADER] = String(stamp);
  return Object.keys(carried).length === 0 ? undefined : carried;
}
