import { sha256Hex, toolError } from '@gatehouse/contracts';
import { isSelfApproval } from '@gatehouse/governance';
import type { ToolError } from '@gatehouse/contracts';
import type { ExecutionOrder } from '@gatehouse/events';
import type { ApprovalRecord, Proposal } from '@gatehouse/state';
import type { ApprovalRecords, ProposalRecords } from './executor-ports.js';

export type Authorized =
  | { readonly ok: true; readonly args: string; readonly proposal: Proposal | undefined; readonly approval: ApprovalRecord }
  | { readonly ok: false; readonly error: ToolError };

const no = (error: ToolError): Authorized => ({ ok: false, error });

/**
 * Everything a write must prove before it runs, checked against the stores (never against the
 * grant copied into the order, which a topic writer could forge): the approval exists, is unexpired,
 * was given by someone holding the required role who is not the person the run acts for, and covers
 * exactly these canonical arguments — re-hashed here.
 */
export async function authorize(
  order: ExecutionOrder,
  approvals: Pick<ApprovalRecords, 'get'>,
  proposals: Pick<ProposalRecords, 'get'>,
  now: number,
): Promise<Authorized> {
  if (order.approval === null) return no(toolError('APPROVAL_NOT_FOUND', 'A write reached the executor without an approval'));
  // Both records are read at once (one round trip); the checks below still run in their order.
  const [found, stored] = await Promise.all([
    approvals.get(order.approval.approval_id),
    order.proposal_id === null ? Promise.resolve(undefined) : proposals.get(order.proposal_id),
  ]);
  if (found === undefined) return no(toolError('APPROVAL_NOT_FOUND', 'The approval this write names is not in the approval store'));
  const approval = found.record;
  if (approval.expires_at <= now) return no(toolError('APPROVAL_EXPIRED', 'The approval expired before the write could run'));
  if (approval.required_role !== null && !approval.approver_roles.includes(approval.required_role)) {
    return no(toolError('UNAUTHORIZED_APPROVER', `The approver does not hold the role ${approval.required_role}`));
  }
  let proposal: Proposal | undefined;
  if (order.proposal_id !== null) {
    proposal = stored?.proposal;
    if (proposal === undefined) return no(toolError('PROPOSAL_NOT_FOUND', `Proposal ${order.proposal_id} is gone`));
    if (approval.proposal_id !== proposal.proposal_id) return no(toolError('ARGUMENTS_MISMATCH', 'The approval is for another proposal'));
    const approver = { issuer: approval.approver_issuer, subject: approval.approver_subject };
    if (isSelfApproval(proposal.on_behalf_of ?? order.on_behalf_of ?? null, approver)) {
      return no(toolError('SELF_APPROVAL', 'The person a run acts on behalf of cannot approve its proposal'));
    }
    if (proposal.run_id !== order.run_id || proposal.tenant !== order.tenant || proposal.tool !== order.tool) {
      return no(toolError('ARGUMENTS_MISMATCH', 'The order does not match its proposal'));
    }
  }
  const args = proposal?.arguments ?? order.arguments;
  const rehashed = sha256Hex(args);
  const claimed = [
    proposal?.arguments_sha256 ?? rehashed,
    approval.arguments_sha256,
    order.arguments_sha256,
    order.approval.arguments_sha256,
  ];
  if (order.arguments !== args || claimed.some((hash) => hash !== rehashed)) {
    return no(toolError('ARGUMENTS_MISMATCH', 'The arguments differ from the ones that were approved; nothing was executed'));
  }
  return { ok: true, args, proposal, approval };
}
