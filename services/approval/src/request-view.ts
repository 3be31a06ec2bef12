import type { ApprovalRequest, Target } from '@gatehouse/events';
import type { Approver } from './approvers.js';
import { authorityProblem, signedInRecently } from './approval-desk.js';
import type { ApprovalState, Decider, StoredRequest } from './request-repository.js';

/** One request as the API lists it: enough to pick it, nothing of its arguments. */
export interface RequestSummary {
  readonly proposal_id: string;
  readonly state: ApprovalState;
  readonly tenant: string;
  readonly tool: string;
  readonly environment: string;
  readonly target: Target;
  readonly effect: string;
  readonly approver_role: string;
  readonly arguments_sha256: string;
  readonly requested_at: number;
  readonly expires_at: number;
  /** Milliseconds until the request lapses, by the database's clock; 0 once it has. */
  readonly time_left_ms: number;
  readonly server_now: number;
  /** Whether the caller holds the authority to decide (role, not the run's own principal). */
  readonly may_decide: boolean;
  /** Why not, as an error code, when `may_decide` is false for reasons of authority. */
  readonly may_not_because: string | null;
  /** Seconds within which an approver must have signed in (a step-up rule), or null. */
  readonly recent_sign_in_s: number | null;
  /** True when approving now would first send the caller back to the IdP to sign in again. */
  readonly sign_in_again: boolean;
  readonly decided_by: string | null;
  /** The deciding person's issuer, subject, display name and time of sign-in. */
  readonly decider: Decider | null;
  readonly decided_at: number | null;
  readonly reason: string | null;
  readonly approval_id: string | null;
  readonly approval_expires_at: number | null;
}

/** One request in full: the stored canonical request exactly as it will execute. */
export interface RequestDetail extends RequestSummary {
  readonly request: ApprovalRequest;
}

export function summaryOf(row: StoredRequest, approver: Approver): RequestSummary {
  const { request } = row;
  const problem = authorityProblem(approver, row);
  return {
    proposal_id: row.proposal_id,
    state: row.state,
    tenant: row.tenant,
    tool: request.tool,
    environment: request.environment,
    target: request.target,
    effect: request.effect,
    approver_role: request.approver_role,
    arguments_sha256: request.arguments_sha256,
    requested_at: request.requested_at,
    expires_at: row.expires_at,
    time_left_ms: row.state === 'pending' ? Math.max(0, row.expires_at - row.now) : 0,
    server_now: row.now,
    may_decide: problem === undefined,
    may_not_because: problem?.code ?? null,
    recent_sign_in_s: request.recent_sign_in_s ?? null,
    sign_in_again: !signedInRecently(approver, row, row.now),
    decided_by: row.decided_by,
    decider: row.decider,
    decided_at: row.decided_at,
    reason: row.reason,
    approval_id: row.approval_id,
    approval_expires_at: row.approval_expires_at,
  };
}

export function detailOf(row: StoredRequest, approver: Approver): RequestDetail {
  return { ...summaryOf(row, approver), request: row.request };
}
