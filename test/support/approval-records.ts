import { randomUUID } from 'node:crypto';
import type { ApprovalRecord, Proposal } from '@gatehouse/state';

/** A proposal of a write, open for a minute from `now`, under a fresh id. */
export function sampleProposal(now = Date.now()): Proposal {
  return {
    proposal_id: `p_${randomUUID().slice(0, 8)}`,
    tool: 'commit_address_change.v2',
    arguments: '{}',
    arguments_sha256: 'h',
    target: { type: 'customer', id: 'C-1', version: 1 },
    effect: 'test',
    diff: { changes: [], recipients: [], amount: null, affected_records: 1, irreversible: [] },
    environment: 'sandbox',
    run_id: 'run-1',
    tenant: 'acme',
    principal: 'agent:a',
    created_at: now,
    expires_at: now + 60_000,
  };
}

/** A person's approval of proposal `proposalId`, valid for a minute from `now`, under `approvalId` (a fresh id by default). */
export function sampleApproval(proposalId: string, now = Date.now(), approvalId = `a_${randomUUID().slice(0, 8)}`): ApprovalRecord {
  return {
    approval_id: approvalId,
    proposal_id: proposalId,
    arguments_sha256: 'h',
    target_type: 'customer',
    target_id: 'C-1',
    target_version: 1,
    approved_by: 'lead@acme',
    approver_roles: ['support-lead'],
    required_role: 'support-lead',
    approved_at: now,
    expires_at: now + 60_000,
  };
}
