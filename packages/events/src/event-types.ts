/**
 * TypeScript views of the Avro events in the top-level `schemas/`. Timestamps are epoch milliseconds; optional
 * Avro fields (unions with null) are `null` when absent, as they are on the wire.
 */

import type { Effect } from '@gatehouse/contracts';

export type EpochMillis = number;

export interface ToolCommand {
  readonly schema_version: number;
  readonly command_id: string;
  readonly run_id: string;
  readonly tenant: string;
  readonly tool: string;
  readonly arguments: string;
  readonly sent_at: EpochMillis;
  readonly deadline_at: EpochMillis | null;
}

export interface ApprovalGrant {
  readonly approval_id: string;
  readonly approved_by: string;
  readonly approved_at: EpochMillis;
  readonly expires_at: EpochMillis;
  readonly arguments_sha256: string;
  readonly target_version: number | null;
}

export interface ExecutionOrder {
  readonly schema_version: number;
  readonly order_id: string;
  readonly command_id: string;
  readonly run_id: string;
  readonly tenant: string;
  readonly principal: string;
  readonly environment: string;
  readonly tool: string;
  /** The contracts' Effect; the Avro enum `Effect` has the same symbols (`read`, `write`). */
  readonly effect: Effect;
  readonly arguments: string;
  readonly arguments_sha256: string;
  readonly proposal_id: string | null;
  readonly approval: ApprovalGrant | null;
  readonly idempotency_key: string | null;
  readonly deadline_at: EpochMillis | null;
  readonly issued_at: EpochMillis;
  /** The person whose agent the run is (from the run); null when it was registered without one. */
  readonly on_behalf_of?: Person | null;
  /** The sha256 of the tool version's contract as the ordering service holds it (`contractSha256`). */
  readonly contract_sha256?: string | null;
}

export interface Target {
  readonly type: string;
  readonly id: string;
  readonly version: number | null;
}

export interface FieldChange {
  readonly field: string;
  readonly before: string | null;
  readonly after: string | null;
}

export interface Money {
  readonly minor: number;
  readonly currency: string;
}

export interface Diff {
  readonly changes: readonly FieldChange[];
  readonly recipients: readonly string[];
  readonly amount: Money | null;
  readonly affected_records: number;
  readonly irreversible: readonly string[];
}

export interface ApprovalRequest {
  readonly schema_version: number;
  readonly proposal_id: string;
  readonly command_id: string;
  readonly run_id: string;
  readonly tenant: string;
  readonly principal: string;
  readonly environment: string;
  readonly tool: string;
  readonly arguments: string;
  readonly arguments_sha256: string;
  readonly target: Target;
  readonly effect: string;
  readonly diff: Diff;
  readonly approver_role: string;
  readonly rule_id: string;
  readonly requested_at: EpochMillis;
  readonly expires_at: EpochMillis;
  /** The person whose agent asked; they may never approve it. Null when the run names no person. */
  readonly on_behalf_of?: Person | null;
  /** Seconds within which the approver must have signed in at the IdP (a step-up rule); null when not asked. */
  readonly recent_sign_in_s?: number | null;
}

/** A person as their identity provider names them. */
export interface Person {
  readonly issuer: string;
  readonly subject: string;
  readonly name: string | null;
}

/** Who decided, as their identity provider names them, and when they last signed in there. */
export interface Decider {
  readonly issuer: string;
  readonly subject: string;
  readonly name: string | null;
  readonly auth_time: EpochMillis | null;
}

export const DecisionKind = { approved: 'approved', rejected: 'rejected', expired: 'expired' } as const;
export type DecisionKind = (typeof DecisionKind)[keyof typeof DecisionKind];

export interface ApprovalDecision {
  readonly schema_version: number;
  readonly decision_id: string;
  readonly proposal_id: string;
  readonly command_id: string;
  readonly run_id: string;
  readonly tenant: string;
  readonly tool: string;
  readonly decision: DecisionKind;
  readonly decided_by: string | null;
  readonly decided_at: EpochMillis;
  readonly reason: string | null;
  readonly arguments_sha256: string;
  readonly target_type: string;
  readonly target_id: string;
  readonly target_version: number | null;
  readonly approval_expires_at: EpochMillis | null;
  /** Who decided; null for an expiry, a withdrawal, or a decision made before people were recorded. */
  readonly decider?: Decider | null;
}

export const ResultStatus = {
  ok: 'ok',
  error: 'error',
  pending_approval: 'pending_approval',
  unknown: 'unknown',
} as const;
export type ResultStatus = (typeof ResultStatus)[keyof typeof ResultStatus];

export interface ToolErrorEvent {
  readonly code: string;
  readonly message: string;
  readonly retryable: boolean;
  readonly field: string | null;
  readonly permitted: readonly string[];
  readonly next: string | null;
  readonly retry_after_ms: number | null;
  readonly details: string | null;
}

export interface PendingApproval {
  readonly proposal_id: string;
  readonly approver_role: string;
  readonly expires_at: EpochMillis;
}

export interface ToolResult {
  readonly schema_version: number;
  readonly command_id: string;
  readonly run_id: string;
  readonly tenant: string;
  readonly tool: string;
  readonly status: ResultStatus;
  readonly operation_id: string | null;
  readonly result: string | null;
  readonly error: ToolErrorEvent | null;
  readonly pending: PendingApproval | null;
  readonly arguments_sha256: string | null;
  readonly completed_at: EpochMillis;
  readonly duration_ms: number | null;
}

export interface OperatorHandoff {
  readonly schema_version: number;
  readonly handoff_id: string;
  readonly command_id: string;
  readonly run_id: string;
  readonly tenant: string;
  readonly tool: string;
  readonly proposal_id: string | null;
  readonly idempotency_key: string;
  readonly arguments_sha256: string;
  readonly reason: string;
  readonly last_error: string | null;
  readonly executor: string;
  readonly detected_at: EpochMillis;
}
