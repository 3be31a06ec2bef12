import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalArguments } from '@gatehouse/contracts';
import { EventPublisher } from '@gatehouse/events';
import type { ApprovalDecision, ExecutionOrder, ToolResult } from '@gatehouse/events';
import { TOKEN_FILE_ISSUER } from '@gatehouse/approval';
import { ProposalStore } from '@gatehouse/state';
import type { Run } from '@gatehouse/state';
import type { PendingNotice } from '@gatehouse/client';
import { IDENTITIES, TOKENS } from './support/approval.js';
import { decideAs } from './support/decide.js';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';
import { eventually } from './support/stack.js';
import { collect, currentVersion, preview, shippingLine1 } from './support/writes.js';
import { signedHeaders } from './support/signing.js';

type Who = keyof typeof TOKENS;

describe('writes go through a person who approves the exact canonical proposal', () => {
  let g: Gatehouse;
  let run: Run;
  let otherRun: Run;
  let decided: Awaited<ReturnType<typeof collect<'approvalsDecided'>>>;
  let orders: Awaited<ReturnType<typeof collect<'execute'>>>;
  let results: Awaited<ReturnType<typeof collect<'results'>>>;

  beforeAll(async () => {
    g = await startGatehouse('approvalflow', { approval: true });
    // The run acts for owner@acme.example, who is also an approver: self-approval must still be refused.
    // Four eyes compare the person's identity (issuer and subject), never the run's principal string.
    run = await g.createRun('support-agent', {
      principal: 'agent:support-bot',
      onBehalfOf: { issuer: TOKEN_FILE_ISSUER, subject: IDENTITIES.agentOwner, name: 'Otto Owner' },
    });
    otherRun = await g.createRun('support-agent', { principal: 'agent:other-bot' });
    decided = await collect(g, 'approvalsDecided');
    orders = await collect(g, 'execute');
    results = await collect(g, 'results');
  });
  afterAll(async () => {
    await Promise.all([decided.stop(), orders.stop(), results.stop()]);
    await g.stop();
  });

  const api = (path: string, who: Who): Promise<Response> =>
    fetch(`${g.approval?.url ?? ''}/api/approvals/${path}`, { headers: { authorization: `Bearer ${TOKENS[who]}` } });
  /** Decides as `who` would in the console: on the request as read, with its hash and target version. */
  const decide = (proposalId: string, decision: 'approve' | 'reject', who: Who, reason?: string) =>
    decideAs<{ error?: { code: string } }>(
      g.approval?.url ?? '',
      proposalId,
      decision,
      TOKENS[who],
      reason === undefined ? {} : { reason },
    );

  /** Sends the commit and resolves once the approval service holds the pending request. */
  async function commitPending(
    proposalId: string,
    asRun: Run = run,
  ): Promise<{ settled: ReturnType<Gatehouse['client']['call']>; pending: PendingNotice }> {
    let notice: PendingNotice | undefined;
    const settled = g.client.call(
      'commit_address_change.v2',
      { proposal_id: proposalId },
      {
        runId: asRun.run_id,
        tenant: asRun.tenant,
        timeoutMs: 60_000,
        onPending: (p) => (notice = p),
      },
    );
    const pending = await eventually(() => notice, 20_000, 'pending_approval');
    for (let i = 0; i < 200; i += 1) {
      if ((await api(proposalId, 'lead')).status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return { settled, pending };
  }

  it('runs preview → commit → pending → approve → the committed evidence', async () => {
    const proposalId = await preview(g, run, '10 Approved Avenue');
    const { settled, pending } = await commitPending(proposalId);
    expect(pending).toMatchObject({ proposal_id: proposalId, approver_role: 'support-lead' });
    expect(await currentVersion(g)).toBe(17);

    const shown = (await (await api(proposalId, 'lead')).json()) as {
      request: { arguments: string; diff: { changes: { field: string; after: string }[] } };
    };
    expect(shown.request.diff.changes[0]?.field).toBe('shipping_address');
    expect(JSON.parse(shown.request.diff.changes[0]?.after ?? '{}')).toMatchObject({ line1: '10 Approved Avenue' });

    const approve = await decide(proposalId, 'approve', 'lead');
    expect(approve.status).toBe(200);
    const result = await settled;
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.result).toMatchObject({
      customer_id: 'C-1842',
      previous_version: 17,
      new_version: 18,
      changed_fields: ['shipping_address'],
    });
    expect((result.result as { committed_at: string }).committed_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(await currentVersion(g)).toBe(18);
    expect(await shippingLine1(g)).toBe('10 Approved Avenue');
    // The collectors read the topics on their own and may trail the client's answer.
    const decision = await eventually(
      () => decided.events.find((d: ApprovalDecision) => d.proposal_id === proposalId),
      20_000,
      'the decision',
    );
    expect(decision).toMatchObject({ decision: 'approved', decided_by: IDENTITIES.lead, target_version: 17 });

    // The same commit retried answers with the stored result; replaying the approved order changes nothing.
    const retried = await g.client.call('commit_address_change.v2', { proposal_id: proposalId }, { runId: run.run_id, tenant: 'acme' });
    expect(retried.ok && retried.result).toEqual(result.result);
    const approvedOrder = await eventually(
      () => orders.events.find((o: ExecutionOrder) => o.proposal_id === proposalId && o.approval?.approved_by === IDENTITIES.lead),
      20_000,
      'the approved order',
    );
    const replay = { ...approvedOrder, command_id: `replay-${proposalId}` };
    const publisher = await EventPublisher.connect(g.kafka, g.serde);
    await publisher.publish('execute', replay.tenant, replay, signedHeaders(replay));
    await publisher.disconnect();
    const replayed = await eventually(
      () => results.events.find((r: ToolResult) => r.command_id === replay.command_id),
      20_000,
      'the replay answer',
    );
    expect(replayed.status).toBe('ok');
    expect(replayed.operation_id).toBe(result.operationId);
    expect(await currentVersion(g)).toBe(18);
  });

  it('leaves nothing changed and the proposal unconsumed when the customer changed after the proposal (the seeds’ contract test)', async () => {
    await g.customers.db.query(`update ${g.customers.t.customers} set version = 17 where id = 'C-1001'`);
    const proposalId = await preview(g, run, '11 Stale Street', 'C-1001');
    const before = await shippingLine1(g, 'C-1001');
    await g.customers.db.query(`update ${g.customers.t.customers} set version = 18 where id = 'C-1001'`);
    const { settled } = await commitPending(proposalId);
    expect((await decide(proposalId, 'approve', 'lead')).status).toBe(200);
    const result = await settled;
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({
      code: 'VERSION_CONFLICT',
      retryable: false,
      field: '/expected_version',
      next: 'preview_address_change.v1',
    });
    expect(await shippingLine1(g, 'C-1001')).toBe(before);
    expect(await currentVersion(g, 'C-1001')).toBe(18);
    expect((await new ProposalStore(g.redis, g.keys).get(proposalId))?.state).toBe('open');
  });

  it('refuses an approver without the role and the person the run acts for, and keeps the request pending', async () => {
    const proposalId = await preview(g, run, '12 Refused Road', 'C-1004');
    const version = await currentVersion(g, 'C-1004');
    const { settled } = await commitPending(proposalId);
    const viewer = await decide(proposalId, 'approve', 'viewer');
    expect([viewer.status, viewer.body.error?.code]).toEqual([403, 'UNAUTHORIZED_APPROVER']);
    const self = await decide(proposalId, 'approve', 'agentOwner');
    expect([self.status, self.body.error?.code]).toEqual([403, 'SELF_APPROVAL']);
    expect(((await (await api(proposalId, 'lead')).json()) as { state: string }).state).toBe('pending');
    expect(await currentVersion(g, 'C-1004')).toBe(version);

    // A rejection with its reason reaches the agent as a typed result.
    expect((await decide(proposalId, 'reject', 'lead')).status).toBe(400);
    expect((await decide(proposalId, 'reject', 'lead', 'Customer called: keep the old address')).status).toBe(200);
    const result = await settled;
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe('APPROVAL_REJECTED');
    expect(result.error.message).toContain('Customer called: keep the old address');
    expect(await currentVersion(g, 'C-1004')).toBe(version);
  });

  it('refuses a commit naming another run’s proposal', async () => {
    const proposalId = await preview(g, otherRun, '13 Foreign Lane', 'C-1005');
    const result = await g.client.call('commit_address_change.v2', { proposal_id: proposalId }, { runId: run.run_id, tenant: 'acme' });
    expect(result.ok === false && result.error.code).toBe('CAPABILITY_DENIED');
    expect(await shippingLine1(g, 'C-1005')).not.toBe('13 Foreign Lane');
  });

  it('executes exactly the approved effect even when every agent-controlled copy of the arguments is altered', async () => {
    const proposalId = await preview(g, run, '14 Shown Street', 'C-1003');
    const stored = await new ProposalStore(g.redis, g.keys).get(proposalId);
    if (stored === undefined) throw new Error('no proposal');
    // The commit command cannot carry arguments of its own.
    const smuggled = await g.client.call(
      'commit_address_change.v2',
      { proposal_id: proposalId, destination: { kind: 'new', line1: '666 Smuggled Street', city: 'York', country: 'GB' } },
      { runId: run.run_id, tenant: 'acme' },
    );
    expect(smuggled.ok === false && smuggled.error.code).toBe('INVALID_ARGUMENT');

    const { settled } = await commitPending(proposalId);
    const shown = (await (await api(proposalId, 'lead')).json()) as { request: { arguments: string; arguments_sha256: string } };
    expect(shown.request.arguments).toBe(stored.proposal.arguments);
    expect((await decide(proposalId, 'approve', 'lead')).status).toBe(200);
    const legit = await eventually(
      () => orders.events.find((o: ExecutionOrder) => o.proposal_id === proposalId && o.approval !== null),
      20_000,
      'the approved order',
    );

    // A forged copy of the order on the topic: other arguments, hashes recomputed to match them.
    const forgedArgs = canonicalArguments({
      ...(JSON.parse(legit.arguments) as object),
      destination: { kind: 'new', line1: '666 Forged Street', city: 'York', country: 'GB' },
    });
    const forged: ExecutionOrder = {
      ...legit,
      order_id: `forged-${legit.order_id}`,
      command_id: `forged-${legit.command_id}`,
      arguments: forgedArgs.canonical,
      arguments_sha256: forgedArgs.sha256,
      approval: legit.approval === null ? null : { ...legit.approval, arguments_sha256: forgedArgs.sha256 },
    };
    const publisher = await EventPublisher.connect(g.kafka, g.serde);
    // Signed with a trusted key, as if an issuer's key had leaked: the stores still refuse it.
    await publisher.publish('execute', forged.tenant, forged, signedHeaders(forged));
    await publisher.disconnect();

    const result = await settled;
    expect(result.ok).toBe(true);
    const refused = await eventually(
      () => results.events.find((r: ToolResult) => r.command_id === forged.command_id),
      20_000,
      'the forged order’s answer',
    );
    expect(['ARGUMENTS_MISMATCH', 'IDEMPOTENCY_KEY_REUSED']).toContain(refused.error?.code);
    expect(await shippingLine1(g, 'C-1003')).toBe('14 Shown Street');
    const applied = await g.customers.db.query<{ line1: string; city: string; country: string }>(
      `select line1, city, country from ${g.customers.t.customers} where id = 'C-1003'`,
    );
    const approvedDestination = (JSON.parse(shown.request.arguments) as { destination: { line1: string; city: string; country: string } })
      .destination;
    expect(applied.rows[0]).toEqual({
      line1: approvedDestination.line1,
      city: approvedDestination.city,
      country: approvedDestination.country,
    });
  });
});
