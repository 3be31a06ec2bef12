import { randomBytes, randomUUID } from 'node:crypto';
import { contractSha256 } from '@gatehouse/contracts';
import type { WriteVerdict } from '@gatehouse/governance';
import { executionOrder } from '@gatehouse/events';
import type { ApprovalRequest, ExecutionOrder, PendingApproval, ToolCommand } from '@gatehouse/events';
import type { ApprovalStore, ProposalStore } from '@gatehouse/state';

export type WriteDecision =
  | { readonly kind: 'execute'; readonly order: ExecutionOrder }
  | { readonly kind: 'approval'; readonly request: ApprovalRequest; readonly pending: PendingApproval };

export interface WriteDeps {
  /** Where a proposal made by the boundary is stored before anything names it. */
  readonly proposals: ProposalStore;
  /** Where a policy grant is stored before the order that carries it. */
  readonly approvals: ApprovalStore;
}

/**
 * What a write's verdict causes: a proposal made by the boundary is stored; an allowed write gets a
 * policy grant and its order; one that needs a person gets an approval request and a pending answer.
 */
export async function decideWrite(command: ToolCommand, verdict: WriteVerdict, deps: WriteDeps, now: number): Promise<WriteDecision> {
  if (verdict.kind === 'finished') return execute(command, verdict, verdict.idempotencyKey, null, now);
  const { run, tool, proposal } = verdict;
  if (verdict.implicit) await deps.proposals.save(proposal);
  if (verdict.kind === 'allow') {
    const approvalId = `apr_policy_${randomBytes(10).toString('hex')}`;
    const expiresAt = verdict.grantExpiresAt;
    await deps.approvals.save({
      approval_id: approvalId,
      proposal_id: proposal.proposal_id,
      arguments_sha256: proposal.arguments_sha256,
      target_type: proposal.target.type,
      target_id: proposal.target.id,
      target_version: proposal.target.version,
      approved_by: `policy:${verdict.ruleId}`,
      approver_roles: [],
      required_role: null,
      approved_at: now,
      expires_at: expiresAt,
    });
    const grant = {
      approval_id: approvalId,
      approved_by: `policy:${verdict.ruleId}`,
      approved_at: now,
      expires_at: expiresAt,
      arguments_sha256: proposal.arguments_sha256,
      target_version: proposal.target.version,
    };
    return execute(command, verdict, verdict.idempotencyKey, grant, now);
  }
  return {
    kind: 'approval',
    request: {
      schema_version: 1,
      proposal_id: proposal.proposal_id,
      command_id: command.command_id,
      run_id: run.run_id,
      tenant: run.tenant,
      principal: run.principal,
      environment: run.environment,
      tool: tool.address,
      arguments: proposal.arguments,
      arguments_sha256: proposal.arguments_sha256,
      target: proposal.target,
      effect: proposal.effect,
      diff: proposal.diff,
      approver_role: verdict.approverRole,
      rule_id: verdict.ruleId,
      requested_at: now,
      expires_at: verdict.expiresAt,
      on_behalf_of: proposal.on_behalf_of ?? run.on_behalf_of ?? null,
      recent_sign_in_s: verdict.recentSignInS,
    },
    pending: { proposal_id: proposal.proposal_id, approver_role: verdict.approverRole, expires_at: verdict.expiresAt },
  };
}

function execute(
  command: ToolCommand,
  { run, tool, proposal }: WriteVerdict,
  key: string,
  grant: ExecutionOrder['approval'],
  now: number,
): WriteDecision {
  return {
    kind: 'execute',
    order: executionOrder({
      orderId: randomUUID(),
      commandId: command.command_id,
      run,
      tool: tool.address,
      effect: 'write',
      arguments: proposal.arguments,
      argumentsSha256: proposal.arguments_sha256,
      write: { proposalId: proposal.proposal_id, approval: grant, idempotencyKey: key },
      // The run's end, the grant's and the call's own deadline: no stage extends it.
      deadlines: [run.expires_at, grant?.expires_at, command.deadline_at],
      issuedAt: now,
      contractSha256: contractSha256(tool),
    }),
  };
}
