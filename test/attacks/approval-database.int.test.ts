// Surface: the approval service's PostgreSQL schema (docs/threat-model.md, "S3"). The attacker: whoever
// can write its tables (the service's database user, a leaked DATABASE_URL, a backup restored with
// edits) but holds no key of the approval or the policy service. The promise: the request a person
// decides is the one the policy service signed, and an order goes out only for an approval a person
// made through the service: a row marked approved, another request put under a real approval, a
// request edited before the person decides, or an approval re-opened under another name yields no
// order, only a counted refusal.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalRequest, startApprovalHarness, TOKENS } from '../support/approval.js';
import type { ApprovalHarness } from '../support/approval.js';
import { decideAs } from '../support/decide.js';
import { pollUntil } from '../support/poll.js';

interface ErrorBody {
  readonly error: { readonly code: string; readonly message: string };
}

const id = (prefix: string): string => `${prefix}_${randomBytes(12).toString('hex')}`;

describe('an attacker who can write the approval schema, with no key of any service', () => {
  let h: ApprovalHarness;

  beforeAll(async () => {
    h = await startApprovalHarness('approval-database');
  });
  afterAll(async () => {
    await (h as ApprovalHarness | undefined)?.stop();
  });

  /** How many stored requests or approvals the service has refused to act on, by kind. */
  const untrusted = async (kind: 'approvalsRequested' | 'approvalsDecided'): Promise<number> => {
    const metrics = await (await fetch(`${h.url()}/metrics`)).text();
    return metrics
      .split('\n')
      .filter((line) => line.startsWith(`gatehouse_untrusted_records_total{kind="${kind}"`))
      .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
  };

  const rowOf = async (proposalId: string): Promise<{ state: string; published_at: Date | null; approval_id: string | null }> => {
    const { rows } = await h.db.query<{ state: string; published_at: Date | null; approval_id: string | null }>(
      `SELECT state, published_at, approval_id FROM ${h.t.requests} WHERE proposal_id = $1`,
      [proposalId],
    );
    const row = rows[0];
    if (row === undefined) throw new Error(`no request ${proposalId}`);
    return row;
  };

  /** Nothing went out for the proposal: no order, no decision, no approval record in Redis. */
  const nothingOrdered = async (proposalId: string, approvalId: string | null): Promise<void> => {
    expect(h.events.seen.execute.filter((order) => order.proposal_id === proposalId)).toEqual([]);
    expect(h.events.seen.approvalsDecided.filter((decision) => decision.proposal_id === proposalId)).toEqual([]);
    if (approvalId !== null) expect(await h.approvals.get(approvalId)).toBeUndefined();
    expect((await rowOf(proposalId)).published_at).toBeNull();
  };

  it('marks a pending request approved with an UPDATE, as a lead would have: no order, no record, the outbox counts and skips it', async () => {
    const request = approvalRequest();
    await h.submit(request);
    const before = await untrusted('approvalsDecided');
    const approvalId = id('apr');

    await h.db.query(
      `UPDATE ${h.t.requests}
          SET state = 'approved', decided_by = 'lead@acme.example', decided_at = now(), approver_roles = ARRAY['support-lead'],
              decision_id = $2, approval_id = $3, order_id = $4, approval_expires_at = now() + interval '5 minutes',
              decider = $5, publish_claimed_at = NULL
        WHERE proposal_id = $1`,
      [
        request.proposal_id,
        id('dec'),
        approvalId,
        id('ord'),
        JSON.stringify({ issuer: 'https://idp.example', subject: 'lead', name: 'Lena Lead', auth_time: null }),
      ],
    );

    // The outbox claims unpublished decisions every sweep: it has looked at this one once it counts it.
    await pollUntil(
      async () => ((await untrusted('approvalsDecided')) > before ? true : undefined),
      20_000,
      'the outbox to refuse the row',
    );
    await nothingOrdered(request.proposal_id, approvalId);
  });

  it('puts another request, with its own policy signature, under a real and sealed approval: the seal does not cover it, and nothing more is ordered', async () => {
    const real = approvalRequest();
    const other = approvalRequest();
    await h.submit(real);
    await h.submit(other);
    expect((await decideAs(h.url(), real.proposal_id, 'approve', TOKENS.lead)).status).toBe(200);
    await h.events.waitFor('execute', (order) => order.proposal_id === real.proposal_id, 'the real approval’s order');
    await pollUntil(
      async () => ((await rowOf(real.proposal_id)).published_at === null ? undefined : true),
      20_000,
      'the decision to be published',
    );
    const before = await untrusted('approvalsDecided');

    // The other request, exactly as the policy service signed it, with its proof: only the proposal id is the real one's.
    await h.db.query(
      `UPDATE ${h.t.requests} AS t
          SET request = jsonb_set(s.request, '{proposal_id}', to_jsonb(t.proposal_id)), request_proof = s.request_proof,
              published_at = NULL, publish_claimed_at = NULL
         FROM ${h.t.requests} AS s
        WHERE t.proposal_id = $1 AND s.proposal_id = $2`,
      [real.proposal_id, other.proposal_id],
    );

    await pollUntil(
      async () => ((await untrusted('approvalsRequested')) + (await untrusted('approvalsDecided')) > before ? true : undefined),
      20_000,
      'the outbox to refuse the row',
    );
    expect(h.events.seen.execute.filter((order) => order.proposal_id === real.proposal_id)).toHaveLength(1);
    expect((await rowOf(real.proposal_id)).published_at).toBeNull();
  });

  it('rewrites a pending request (arguments, hash, effect) before the lead opens it: the decision is REQUEST_UNVERIFIED and orders nothing', async () => {
    const request = approvalRequest();
    await h.submit(request);
    const before = await untrusted('approvalsRequested');
    const forged = approvalRequest({ proposal_id: request.proposal_id, command_id: request.command_id, run_id: request.run_id });
    const altered = {
      ...request,
      arguments: forged.arguments.replace('C-1842', 'C-0001'),
      arguments_sha256: 'f'.repeat(64),
      effect: 'Replace the shipping address of customer C-0001',
    };

    await h.db.query(`UPDATE ${h.t.requests} SET request = $2, arguments_sha256 = $3 WHERE proposal_id = $1`, [
      request.proposal_id,
      JSON.stringify(altered),
      altered.arguments_sha256,
    ]);

    // The lead reads the request as stored and approves what they were shown.
    const decided = await decideAs<ErrorBody>(h.url(), request.proposal_id, 'approve', TOKENS.lead);
    expect([decided.status, decided.body.error.code]).toEqual([409, 'REQUEST_UNVERIFIED']);
    expect((await rowOf(request.proposal_id)).state).toBe('pending');
    expect(await untrusted('approvalsRequested')).toBeGreaterThan(before);
    await nothingOrdered(request.proposal_id, null);
  });

  it('re-opens a published approval under another approver’s name: the seal no longer matches, and nothing more is published', async () => {
    const request = approvalRequest();
    await h.submit(request);
    expect((await decideAs(h.url(), request.proposal_id, 'approve', TOKENS.lead)).status).toBe(200);
    await h.events.waitFor('execute', (order) => order.proposal_id === request.proposal_id, 'the real approval’s order');
    await pollUntil(
      async () => ((await rowOf(request.proposal_id)).published_at === null ? undefined : true),
      20_000,
      'the decision to be published',
    );
    const before = await untrusted('approvalsDecided');

    await h.db.query(
      `UPDATE ${h.t.requests} SET decided_by = 'ops@acme.example', approver_roles = ARRAY['ops-admin'],
              published_at = NULL, publish_claimed_at = NULL WHERE proposal_id = $1`,
      [request.proposal_id],
    );

    await pollUntil(
      async () => ((await untrusted('approvalsDecided')) > before ? true : undefined),
      20_000,
      'the outbox to refuse the row',
    );
    expect(h.events.seen.execute.filter((order) => order.proposal_id === request.proposal_id)).toHaveLength(1);
    expect(h.events.seen.approvalsDecided.filter((decision) => decision.proposal_id === request.proposal_id)).toHaveLength(1);
    expect((await rowOf(request.proposal_id)).published_at).toBeNull();
  });
});
