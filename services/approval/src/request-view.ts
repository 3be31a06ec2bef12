import type { ApprovalRequest, RequestSummary } from '@gatehouse/events';
import type { Approver } from './approvers.js';
import { authorityProblem, signedInRecently } from './approval-decisions.js';
import type { StoredRequest } from './request-repository.js';

export type { RequestSummary };

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
