import { randomBytes, randomUUID } from 'node:crypto';
import { canonicalJson, toolError } from '@gatehouse/contracts';
import type { ToolContract, ToolError } from '@gatehouse/contracts';
import type { ApprovalRequest, ExecutionOrder, PendingApproval, ToolCommand } from '@gatehouse/events';
import type { ApprovalStore, IdempotencyStore, Proposal, ProposalStore, Run } from '@gatehouse/state';
import type { PolicyTable } from './policy-table.js';

export type WriteDecision =
  | { readonly kind: 'refuse'; readonly error: ToolError }
  | { readonly kind: 'execute'; readonly order: ExecutionOrder }
  | { readonly kind: 'approval'; readonly request: ApprovalRequest; readonly pending: PendingApproval };

export interface WriteDeps {
  readonly table: PolicyTable;
  readonly proposals: ProposalStore;
  readonly approvals: ApprovalStore;
  readonly idempotency: IdempotencyStore;
  /** How long a policy `allow` grant stays usable. */
  readonly grantValidityMs: number;
  /** How long an implicit proposal (of a write that is not a preview/commit pair) lives. */
  readonly proposalTtlMs: number;
}

interface Canonical {
  readonly canonical: string;
  readonly sha256: string;
}

/** The idempotency key of a write, made here and never by the model: run, proposal, operation. */
export function idempotencyKeyOf(runId: string, proposalId: string): string {
  return `${runId}:${proposalId}:commit`;
}

/**
 * A write: find the canonical proposal it executes (stored by its preview, or made here from the
 * validated arguments), then let the policy table decide: allow, ask a person, or deny.
 */
export async function decideWrite(
  command: ToolCommand,
  run: Run,
  tool: ToolContract,
  args: unknown,
  canonical: Canonical,
  deps: WriteDeps,
  now: number,
): Promise<WriteDecision> {
  let proposal: Proposal;
  if (tool.previewedBy !== undefined) {
    const proposalId = (args as { proposal_id: string }).proposal_id;
    const stored = await deps.proposals.get(proposalId);
    if (stored === undefined || stored.proposal.tool !== tool.address) {
      return refuse(toolError('PROPOSAL_NOT_FOUND', `No proposal ${proposalId} for ${tool.address}; preview first`, { next: tool.previewedBy, field: '/proposal_id' }));
    }
    proposal = stored.proposal;
    if (proposal.run_id !== run.run_id || proposal.tenant !== run.tenant) {
      return refuse(toolError('CAPABILITY_DENIED', 'The proposal belongs to another run', { permitted: run.capabilities, field: '/proposal_id' }));
    }
    const key = idempotencyKeyOf(run.run_id, proposal.proposal_id);
    if (stored.state === 'consumed') {
      // Executed already: the executor answers this retry with the stored result, never a second write.
      const record = await deps.idempotency.get(key);
      if (record !== undefined && record.state !== 'in_flight') return execute(command, run, tool, proposal, key, null, now);
      return refuse(toolError('PROPOSAL_CONSUMED', `Proposal ${proposal.proposal_id} was already used`, { next: tool.previewedBy }));
    }
    if (proposal.expires_at <= now) {
      return refuse(toolError('APPROVAL_EXPIRED', `Proposal ${proposal.proposal_id} expired; preview again`, { next: tool.previewedBy }));
    }
  } else {
    proposal = implicitProposal(command, run, tool, args, canonical, now, deps.proposalTtlMs);
  }

  const key = idempotencyKeyOf(run.run_id, proposal.proposal_id);
  const { ruleId, decision } = deps.table.evaluate({
    tool,
    environment: run.environment,
    affectedRecords: proposal.diff.affected_records,
    amount: proposal.diff.amount,
    recipients: proposal.diff.recipients,
    irreversible: proposal.diff.irreversible,
  });
  if (decision.kind === 'deny') {
    return refuse(toolError('POLICY_DENIED', `${decision.reason} (rule ${ruleId})`, { next: decision.next }));
  }
  if (tool.previewedBy === undefined) await deps.proposals.save(proposal);
  if (decision.kind === 'allow') {
    const approvalId = `apr_policy_${randomBytes(10).toString('hex')}`;
    const expiresAt = Math.min(now + deps.grantValidityMs, proposal.expires_at);
    await deps.approvals.save({
      approval_id: approvalId,
      proposal_id: proposal.proposal_id,
      arguments_sha256: proposal.arguments_sha256,
      target_type: proposal.target.type,
      target_id: proposal.target.id,
      target_version: proposal.target.version,
      approved_by: `policy:${ruleId}`,
      approver_roles: [],
      required_role: null,
      approved_at: now,
      expires_at: expiresAt,
    });
    const grant = {
      approval_id: approvalId,
      approved_by: `policy:${ruleId}`,
      approved_at: now,
      expires_at: expiresAt,
      arguments_sha256: proposal.arguments_sha256,
      target_version: proposal.target.version,
    };
    return execute(command, run, tool, proposal, key, grant, now);
  }
  const expiresAt = Math.min(now + decision.ttlMs, proposal.expires_at);
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
      approver_role: decision.approverRole,
      rule_id: ruleId,
      requested_at: now,
      expires_at: expiresAt,
    },
    pending: { proposal_id: proposal.proposal_id, approver_role: decision.approverRole, expires_at: expiresAt },
  };
}

const refuse = (error: ToolError): WriteDecision => ({ kind: 'refuse', error });

function execute(
  command: ToolCommand,
  run: Run,
  tool: ToolContract,
  proposal: Proposal,
  key: string,
  grant: ExecutionOrder['approval'],
  now: number,
): WriteDecision {
  return {
    kind: 'execute',
    order: {
      schema_version: 1,
      order_id: randomUUID(),
      command_id: command.command_id,
      run_id: run.run_id,
      tenant: run.tenant,
      principal: run.principal,
      environment: run.environment,
      tool: tool.address,
      effect: 'write',
      arguments: proposal.arguments,
      arguments_sha256: proposal.arguments_sha256,
      proposal_id: proposal.proposal_id,
      approval: grant,
      idempotency_key: key,
      deadline_at: Math.min(run.expires_at, grant?.expires_at ?? Number.POSITIVE_INFINITY),
      issued_at: now,
    },
  };
}

/** A write that is not a preview/commit pair runs its validated arguments: they become its proposal. */
function implicitProposal(command: ToolCommand, run: Run, tool: ToolContract, args: unknown, canonical: Canonical, now: number, ttlMs: number): Proposal {
  const fields = typeof args === 'object' && args !== null ? Object.entries(args as Record<string, unknown>) : [];
  return {
    proposal_id: `p_${randomBytes(12).toString('hex')}`,
    tool: tool.address,
    arguments: canonical.canonical,
    arguments_sha256: canonical.sha256,
    target: { type: 'tool_call', id: command.command_id, version: null },
    effect: `Call ${tool.address}: ${tool.description}`,
    diff: {
      changes: fields.map(([field, value]) => ({ field, before: null, after: canonicalJson(value) })),
      recipients: [],
      amount: null,
      affected_records: 1,
      irreversible: tool.external === true ? [`${tool.address} acts outside the tenant and cannot be recalled`] : [],
    },
    environment: run.environment,
    run_id: run.run_id,
    tenant: run.tenant,
    principal: run.principal,
    created_at: now,
    expires_at: now + ttlMs,
  };
}
