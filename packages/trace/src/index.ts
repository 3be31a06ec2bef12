export { buildTrace } from './build-trace.js';
export type { BuildTraceOptions, RunEvents } from './build-trace.js';
export { catalogFingerprint } from './catalog-fingerprint.js';
export { formatReport } from './format-report.js';
export { parseTrace } from './parse-trace.js';
export { recordTrace } from './record-trace.js';
export type { RecordTraceOptions } from './record-trace.js';
export { placeholderOf, redactArguments } from './redact-arguments.js';
export { replayTrace } from './replay-trace.js';
export type { ReplayOptions, ReplayPolicySubject, ReplayPolicyTable } from './replay-trace.js';
export { describeDecision, isAccepted } from './replay-types.js';
export type { ReplayCall, ReplayDecision, ReplayInvariant, ReplayReport, ReplayStatus } from './replay-types.js';
export { TraceError } from './trace-error.js';
export type { TraceErrorCode } from './trace-error.js';
export { ApprovalOutcome, DecisionStatus, TRACE_FORMAT, TraceResultStatus, traceJson } from './trace-format.js';
export type {
  Trace,
  TraceApproval,
  TraceCall,
  TraceCatalog,
  TraceDecision,
  TraceFormat,
  TracePolicy,
  TraceResult,
  TraceScope,
  TraceTool,
} from './trace-format.js';
