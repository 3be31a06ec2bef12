import { createHash, randomBytes } from 'node:crypto';
import { canonicalArguments, canonicalJson } from '@gatehouse/contracts';
import type { CanonicalArguments, Proposal, ProposalDraft, ProposalPerson, ToolContract } from '@gatehouse/contracts';

export type { Proposal } from '@gatehouse/contracts';

/** Whose call a proposal belongs to: a run, or the execution order made for it. */
export interface ProposalOrigin {
  readonly run_id: string;
  readonly tenant: string;
  readonly principal: string;
  readonly on_behalf_of?: ProposalPerson | null;
  readonly environment: string;
}

/** The idempotency key of a write, made by trusted code and never by the model: run, proposal, operation. */
export function idempotencyKeyOf(runId: string, proposalId: string): string {
  return `${runId}:${proposalId}:commit`;
}

const newProposalId = (): string => `p_${randomBytes(12).toString('hex')}`;

/**
 * The proposal id of a write with no preview, derived from the run, the command, the tool and its
 * arguments: the policy deciding the same command again (after a crash, or a claim Redis lost in
 * a failover) makes the same proposal, so the write keeps its idempotency key and the system of
 * record can tell the second send from a new write. A command id reused with other arguments gets
 * another id.
 */
function implicitProposalId(runId: string, commandId: string, tool: string, argumentsSha256: string): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([runId, commandId, tool, argumentsSha256]))
    .digest('hex');
  return `p_${digest.slice(0, 24)}`;
}

const json = (value: unknown): string | null => (value === null || value === undefined ? null : canonicalJson(value));

/**
 * The proposal a preview computed, for its commit tool: canonical arguments, their hash, the
 * concrete diff (before/after as canonical JSON, null when absent). Lives `ttlMs` from `now`.
 */
export function buildProposal(draft: ProposalDraft, commitTool: string, origin: ProposalOrigin, ttlMs: number, now = Date.now()): Proposal {
  const { canonical, sha256 } = canonicalArguments(draft.arguments);
  return {
    proposal_id: newProposalId(),
    tool: commitTool,
    arguments: canonical,
    arguments_sha256: sha256,
    target: draft.target,
    effect: draft.effect,
    diff: {
      changes: draft.diff.changes.map((c) => ({ field: c.field, before: json(c.before), after: json(c.after) })),
      recipients: draft.diff.recipients,
      amount: draft.diff.amount,
      affected_records: draft.diff.affectedRecords,
      irreversible: draft.diff.irreversible,
    },
    environment: origin.environment,
    run_id: origin.run_id,
    tenant: origin.tenant,
    principal: origin.principal,
    on_behalf_of: origin.on_behalf_of ?? null,
    created_at: now,
    expires_at: now + ttlMs,
  };
}

/**
 * A write that is not a preview/commit pair runs its validated arguments: they become its proposal,
 * targeted at the call itself, one record, no recipients or amount; irreversible when the tool acts
 * outside the tenant. Lives `ttlMs` from `now`. Its id is the same each time the same command is decided.
 */
export function implicitProposal(
  commandId: string,
  origin: ProposalOrigin,
  tool: ToolContract,
  args: unknown,
  canonical: CanonicalArguments,
  now: number,
  ttlMs: number,
): Proposal {
  const fields = typeof args === 'object' && args !== null ? Object.entries(args as Record<string, unknown>) : [];
  return {
    proposal_id: implicitProposalId(origin.run_id, commandId, tool.address, canonical.sha256),
    tool: tool.address,
    arguments: canonical.canonical,
    arguments_sha256: canonical.sha256,
    target: { type: 'tool_call', id: commandId, version: null },
    effect: `Call ${tool.address}: ${tool.description}`,
    diff: {
      changes: fields.map(([field, value]) => ({ field, before: null, after: canonicalJson(value) })),
      recipients: [],
      amount: null,
      affected_records: 1,
      irreversible: tool.external === true ? [`${tool.address} acts outside the tenant and cannot be recalled`] : [],
    },
    environment: origin.environment,
    run_id: origin.run_id,
    tenant: origin.tenant,
    principal: origin.principal,
    on_behalf_of: origin.on_behalf_of ?? null,
    created_at: now,
    expires_at: now + ttlMs,
  };
}
