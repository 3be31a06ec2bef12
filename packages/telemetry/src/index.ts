export { createLogger } from './logger.js';
export type { CreateLoggerOptions, Logger } from './logger.js';
export {
  APPROVAL_DECISIONS,
  GatehouseMetrics,
  LATENCY_BUCKETS_SECONDS,
  METRICS,
  OUTPUT_VIOLATION_CODES,
  PolicyOutcome,
  RESULT_STATUSES,
  RETRY_CLASSES,
  Stage,
  UNKNOWN_REASONS,
} from './metrics.js';
export type { ErrorLike, MetricsOptions, ResultLike } from './metrics.js';
export { codeLabel, OTHER, ToolLabelSet } from './labels.js';
export type { ToolLabels, ToolLike } from './labels.js';
export { fieldLabel } from './field-label.js';
export { processRegistry } from './process-metrics.js';
export { startConsumerLag } from './consumer-lag.js';
export type { ConsumerLagOptions, LagAdmin, RunningConsumerLag } from './consumer-lag.js';
export { checkReadiness } from './readiness.js';
export type { Readiness, ReadinessCheck } from './readiness.js';
export {
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
  TRACEPARENT_HEADER,
  TRACESTATE_HEADER,
} from './trace-context.js';
export type { CarriedHeaders, RecordHeaders } from './trace-context.js';
export { OTLP_ENDPOINT_VARIABLE, SERVICE_NAME_VARIABLE, startTracing, tracesUrl } from './tracing.js';
export type { Tracing, TracingOptions } from './tracing.js';
export {
  annotateSpan,
  endSpan,
  endSpanThrown,
  noteOutcome,
  SPAN_ATTRIBUTES,
  startCallSpan,
  startChildSpan,
  startRecordSpan,
  startServerSpan,
  tracerFor,
} from './spans.js';
export type { CallIds, SpanOutcome, SpanScope } from './spans.js';
export type { Context as TraceContext, Span, Tracer } from '@opentelemetry/api';
