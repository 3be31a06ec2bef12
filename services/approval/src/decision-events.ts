import { toolError } from '@gatehouse/contracts';
import { errorResult, executionOrder } from '@gatehouse/events';
import type { ApprovalDecision, ExecutionOrder, ResultAddress, ToolResult } from '@gatehouse/events';
import { idempotencyKeyOf } from '@gatehouse/governance';
import type { ApprovalRecord } from '@gatehouse/state';
import type { StoredRequest } from './request-repository.js';

/** Why a withdrawn request was rejected: shown in the console and in the agent's answer. */
export const WITHDRAWN_REASON = 'withdrawn: the run was stopped (or expired) before anyone decided';

/** The events a decision causes, built from the stored canonical request only. */

function required<T>(value: T | null, what: string, proposalId: string): T {
  if (value === null) throw new Error(`decided request ${proposalId} has no ${what}`);
  return value;
}

/** The audit event of a decision (approved, rejected or expired), for `approvalsDecided`. */
export function decisionEvent(row: StoredRequest): ApprovalDecision {
  const { request } = row;
  if (row.state === 'pending') throw new Error(`request ${row.proposal_id} is not decided`);
  return {
    schema_version: 1,
    decision_id: required(row.decision_id, 'decision id', row.proposal_id),
    proposal_id: row.proposal_id,
    command_id: row.command_id,
    run_id: request.run_id,
    tenant: request.tenant,
    tool: request.tool,
    decision: row.state,
    decided_by: row.decided_by,
    decided_at: required(row.decided_at, 'decision time', row.proposal_id),
    reason: row.reason,
    arguments_sha256: request.arguments_sha256,
    target_type: request.target.type,
    target_id: request.target.id,
    target_version: request.target.version,
    approval_expires_at: row.state === 'approved' ? row.approval_expires_at : null,
    decider: row.decider,
  };
}

/** The approval as the executor trusts it: written to Redis before any order names it. */
export function approvalRecord(row: StoredRequest): ApprovalRecord {
  const { request } = row;
  return {
    approval_id: required(row.approval_id, 'approval id', row.proposal_id),
    proposal_id: row.proposal_id,
    arguments_sha256: request.arguments_sha256,
    target_type: request.target.type,
    target_id: request.target.id,
    target_version: request.target.version,
    approved_by: required(row.decided_by, 'approver', row.proposal_id),
    approver_issuer: row.decider?.issuer ?? null,
    approver_subject: row.decider?.subject ?? null,
    approver_roles: row.approver_roles ?? [],
    required_role: request.approver_role,
    approved_at: required(row.decided_at, 'decision time', row.proposal_id),
    expires_at: required(row.approval_expires_at, 'approval expiry', row.proposal_id),
  };
}

/** The idempotency key of a commit, made by trusted code: run, proposal, operation. */
export function commitKey(row: StoredRequest): string {
  return idempotencyKeyOf(row.request.run_id, row.proposal_id);
}

/**
 * The order that executes an approved proposal's canonical arguments for `commandId`, naming the
 * contract (`contractSha256`) this service holds for the tool, or null when its catalog lacks it.
 */
export function approvedOrder(
  row: StoredRequest,
  commandId: string,
  orderId: string,
  issuedAt: number,
  contract: string | null,
): ExecutionOrder {
  const { request } = row;
  const record = approvalRecord(row);
  return executionOrder({
    orderId,
    commandId,
    run: request,
    tool: request.tool,
    effect: 'write',
    arguments: request.arguments,
    argumentsSha256: request.arguments_sha256,
    write: {
      proposalId: row.proposal_id,
      approval: {
        approval_id: record.approval_id,
        approved_by: record.approved_by,
        approved_at: record.approved_at,
        expires_at: record.expires_at,
        arguments_sha256: record.arguments_sha256,
        target_version: record.target_version,
      },
      idempotencyKey: commitKey(row),
    },
    deadlines: [record.expires_at],
    issuedAt,
    contractSha256: contract,
  });
}

function addressFor(row: StoredRequest, commandId: string): ResultAddress {
  return { command_id: commandId, run_id: row.request.run_id, tenant: row.request.tenant, tool: row.request.tool };
}

/**
 * The typed result a refused proposal sends the agent waiting on `commandId`: APPROVAL_REJECTED
 * with the approver's reason, or APPROVAL_EXPIRED. `next` is the preview tool that makes a new one.
 * It completed when the proposal was refused, so the answer published again is the same answer,
 * byte for byte, and a read of the results topic can tell it is already there.
 */
export function refusalResult(row: StoredRequest, commandId: string, next: string | undefined): ToolResult {
  const error =
    row.state === 'rejected'
      ? toolError('APPROVAL_REJECTED', `Proposal ${row.proposal_id} was rejected: ${row.reason ?? '(no reason)'}`, {
          next,
          retryable: false,
        })
      : toolError('APPROVAL_EXPIRED', `Proposal ${row.proposal_id} was not approved before it expired; silence is never consent`, {
          next,
          retryable: false,
        });
  return errorResult(addressFor(row, commandId), error, {
    argumentsSha256: row.request.arguments_sha256,
    ...(row.decided_at === null ? {} : { completedAt: row.decided_at }),
  });
}
