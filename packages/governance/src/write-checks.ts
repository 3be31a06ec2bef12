import { toolError } from '@gatehouse/contracts';
import type { CanonicalArguments, ToolContract } from '@gatehouse/contracts';
import type { BoundaryCommand, BoundaryDeps, BoundaryRun } from './boundary-ports.js';
import { idempotencyKeyOf, implicitProposal } from './proposal.js';
import type { Proposal } from './proposal.js';
import { refusal } from './verdict.js';
import type { CallVerdict } from './verdict.js';

/**
 * A write that passed the call's checks: find the canonical proposal it executes (stored by its
 * preview, or made here from the validated arguments), then let the policy table decide: allow,
 * ask a person, or deny.
 */
export async function checkWrite(
  command: BoundaryCommand,
  run: BoundaryRun,
  tool: ToolContract,
  args: unknown,
  canonical: CanonicalArguments,
  deps: BoundaryDeps,
  now: number,
): Promise<CallVerdict> {
  const implicit = tool.previewedBy === undefined;
  let proposal: Proposal;
  if (tool.previewedBy !== undefined) {
    const found = await previewedProposal(run, tool, args, canonical, deps, now);
    if (found.kind !== 'proposal') return found;
    proposal = found.proposal;
  } else {
    proposal = implicitProposal(command.command_id, run, tool, args, canonical, now, deps.proposalTtlMs);
  }

  const { ruleId, decision } = deps.table.evaluate({
    tool,
    environment: run.environment,
    affectedRecords: proposal.diff.affected_records,
    amount: proposal.diff.amount,
    recipients: proposal.diff.recipients,
    irreversible: proposal.diff.irreversible,
  });
  if (decision.kind === 'deny') {
    return refusal(toolError('POLICY_DENIED', `${decision.reason} (rule ${ruleId})`, { next: decision.next }), canonical.sha256);
  }
  if (decision.kind === 'allow') {
    return {
      kind: 'allow',
      run,
      tool,
      proposal,
      implicit,
      idempotencyKey: idempotencyKeyOf(run.run_id, proposal.proposal_id),
      ruleId,
      grantExpiresAt: Math.min(now + deps.grantValidityMs, proposal.expires_at),
    };
  }
  return {
    kind: 'approval',
    run,
    tool,
    proposal,
    implicit,
    ruleId,
    approverRole: decision.approverRole,
    expiresAt: Math.min(now + decision.ttlMs, proposal.expires_at),
    recentSignInS: decision.recentSignInS ?? null,
  };
}

/** The proposal a commit names, stored by its preview: refused when missing, another run's, used or expired. */
async function previewedProposal(
  run: BoundaryRun,
  tool: ToolContract,
  args: unknown,
  canonical: CanonicalArguments,
  deps: BoundaryDeps,
  now: number,
): Promise<CallVerdict | { readonly kind: 'proposal'; readonly proposal: Proposal }> {
  const proposalId = (args as { proposal_id: string }).proposal_id;
  const stored = await deps.proposals.get(proposalId);
  if (stored === undefined || stored.proposal.tool !== tool.address) {
    return refusal(
      toolError('PROPOSAL_NOT_FOUND', `No proposal ${proposalId} for ${tool.address}; preview first`, {
        next: tool.previewedBy,
        field: '/proposal_id',
      }),
      canonical.sha256,
    );
  }
  const proposal = stored.proposal;
  if (proposal.run_id !== run.run_id || proposal.tenant !== run.tenant) {
    return refusal(
      toolError('CAPABILITY_DENIED', 'The proposal belongs to another run', { permitted: run.capabilities, field: '/proposal_id' }),
      canonical.sha256,
    );
  }
  if (stored.state === 'consumed') {
    // Executed already, or executing now: the executor answers this retry with the stored result,
    // or IN_PROGRESS (retryable) while the one write still runs; never a second write.
    const key = idempotencyKeyOf(run.run_id, proposal.proposal_id);
    const record = await deps.idempotency.get(key);
    if (record !== undefined) return { kind: 'finished', run, tool, proposal, idempotencyKey: key };
    return refusal(
      toolError('PROPOSAL_CONSUMED', `Proposal ${proposal.proposal_id} was already used`, { next: tool.previewedBy }),
      canonical.sha256,
    );
  }
  if (proposal.expires_at <= now) {
    return refusal(
      toolError('PROPOSAL_EXPIRED', `Proposal ${proposal.proposal_id} expired; preview again`, { next: tool.previewedBy }),
      canonical.sha256,
    );
  }
  return { kind: 'proposal', proposal };
}
