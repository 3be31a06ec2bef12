import { randomBytes } from 'node:crypto';
import { canonicalArguments, canonicalJson } from '@gatehouse/contracts';
import type { ProposalDraft } from '@gatehouse/contracts';
import type { ExecutionOrder } from '@gatehouse/events';
import type { Proposal } from '@gatehouse/state';

const json = (value: unknown): string | null => (value === null || value === undefined ? null : canonicalJson(value));

/** A stored proposal from what a preview computed: canonical arguments, their hash, the concrete diff. */
export function buildProposal(draft: ProposalDraft, commitTool: string, order: ExecutionOrder, ttlMs: number, now = Date.now()): Proposal {
  const { canonical, sha256 } = canonicalArguments(draft.arguments);
  return {
    proposal_id: `p_${randomBytes(12).toString('hex')}`,
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
    environment: order.environment,
    run_id: order.run_id,
    tenant: order.tenant,
    principal: order.principal,
    created_at: now,
    expires_at: now + ttlMs,
  };
}
