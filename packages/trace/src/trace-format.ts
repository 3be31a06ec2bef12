/**
 * The trace of one run, as recorded (`recordTrace`) and replayed (`replayTrace`). Plain JSON: a
 * trace is written to disk and checked into a test suite, so it never holds a raw argument value
 * that is free text, nor any result value (see redact-arguments.ts).
 */

export const TRACE_FORMAT = 'gatehouse-trace/1';
export type TraceFormat = typeof TRACE_FORMAT;

/** What the boundary did with a command. `undecided`: nothing answered it before the recording. */
export const DecisionStatus = {
  routed: 'routed',
  refused: 'refused',
  pending_approval: 'pending_approval',
  undecided: 'undecided',
} as const;
export type DecisionStatus = (typeof DecisionStatus)[keyof typeof DecisionStatus];

export interface TraceDecision {
  readonly status: DecisionStatus;
  /** The error code of a refusal. */
  readonly code?: string;
  /** The JSON pointer a refusal names, when it names one. */
  readonly field?: string;
}

/** `pending`: requested, and no decision was on the topic when the run was recorded. */
export const ApprovalOutcome = { approved: 'approved', rejected: 'rejected', expired: 'expired', pending: 'pending' } as const;
export type ApprovalOutcome = (typeof ApprovalOutcome)[keyof typeof ApprovalOutcome];

export interface TraceApproval {
  readonly decision: ApprovalOutcome;
  /** The approver role the policy table asked for. */
  readonly role: string;
  /** The policy-table rule that asked for the approval. */
  readonly rule: string;
  /** The person on whose behalf the write was asked, when the run names one (absent in older traces). */
  readonly on_behalf_of?: { readonly issuer: string; readonly subject: string } | null;
}

/** The scope figures of a proposal that policy rules look at; recipients and consequences as counts. */
export interface TraceScope {
  readonly affected_records: number;
  readonly amount: { readonly minor: number; readonly currency: string } | null;
  readonly recipients: number;
  readonly irreversible: number;
}

/** The facts a write met the policy table with, for replay against another table. */
export interface TracePolicy {
  readonly environment: string;
  /** The rule that decided; null when the events do not name it. */
  readonly rule: string | null;
  /** Present when an approval request carried the proposal's diff. */
  readonly scope?: TraceScope;
}

export const TraceResultStatus = {
  ok: 'ok',
  error: 'error',
  unknown: 'unknown',
  pending_approval: 'pending_approval',
  none: 'none',
} as const;
export type TraceResultStatus = (typeof TraceResultStatus)[keyof typeof TraceResultStatus];

/** The terminal result of a call: never its values, only status, error code and the view's field names. */
export interface TraceResult {
  readonly status: TraceResultStatus;
  readonly code?: string;
  /** Sorted top-level keys of an `ok` result view. */
  readonly fields?: readonly string[];
}

export interface TraceCall {
  readonly command_id: string;
  readonly tool: string;
  /** The redacted arguments; null when the command's text was not JSON (see `arguments_json`). */
  readonly arguments: unknown;
  /** False when the command's arguments were not a JSON document. */
  readonly arguments_json: boolean;
  /** SHA-256 of the original canonical arguments; null when they had no canonical form. */
  readonly arguments_sha256: string | null;
  readonly decision: TraceDecision;
  readonly approval?: TraceApproval;
  readonly policy?: TracePolicy;
  readonly result: TraceResult;
}

export interface TraceTool {
  readonly address: string;
  readonly effect: 'read' | 'write';
  readonly approval: string | null;
  readonly retired: boolean;
  readonly input_sha256: string;
}

export interface TraceCatalog {
  /** SHA-256 of the canonical JSON of every tool's address, effect, approval, retired, input and output. */
  readonly sha256: string;
  readonly tools: readonly TraceTool[];
}

export interface Trace {
  readonly format: TraceFormat;
  /** ISO 8601. */
  readonly recorded_at: string;
  readonly run: { readonly run_id: string; readonly tenant: string };
  readonly catalog: TraceCatalog;
  readonly calls: readonly TraceCall[];
}

/** Stable text of a trace for a checked-in file: two-space indented, newline-terminated. */
export function traceJson(trace: Trace): string {
  return `${JSON.stringify(trace, null, 2)}\n`;
}
