import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKEN_FILE_ISSUER } from '@gatehouse/approval';
import { contractSha256 } from '@gatehouse/contracts';
import { customerSupportCatalog } from '@gatehouse/example-customer-support';
import type { RequestDetail, RequestSummary } from '@gatehouse/approval';
import { approvalRequest, IDENTITIES, startApprovalHarness, TOKENS } from './support/approval.js';
import { DLQ_HEADER, dlqTopicOf, verifyDecision } from '@gatehouse/events';
import { eventually, readRaw } from './support/stack.js';
import { TEST_KEY_RING } from './support/signing.js';
import type { ApprovalHarness } from './support/approval.js';
import { decideAs } from './support/decide.js';

interface ErrorBody {
  readonly error: { readonly code: string; readonly message: string; readonly state?: string };
}

describe('the approval service: a person decides on the stored canonical proposal', () => {
  let h: ApprovalHarness;

  beforeAll(async () => {
    h = await startApprovalHarness('approval');
  });
  afterAll(async () => {
    await h.stop();
  });

  // Each decision is taken as in the console: on the request as read, with its hash and target version.
  const approve = (proposalId: string, token: string) => decideAs<RequestDetail & ErrorBody>(h.url(), proposalId, 'approve', token);
  const reject = (proposalId: string, token: string, body: { readonly reason?: string }) =>
    decideAs<RequestDetail & ErrorBody>(h.url(), proposalId, 'reject', token, body);
  const decisionsOf = (proposalId: string) => h.events.seen.approvalsDecided.filter((d) => d.proposal_id === proposalId);
  const ordersOf = (proposalId: string) => h.events.seen.execute.filter((o) => o.proposal_id === proposalId);

  it('lists pending requests of the approver’s tenants, newest first, and hides other tenants', async () => {
    const older = approvalRequest({ requested_at: Date.now() - 5_000 });
    const newer = approvalRequest({ requested_at: Date.now() });
    const globex = approvalRequest({ tenant: 'globex' });
    await h.submit(older);
    await h.submit(newer);
    await h.submit(globex);

    const acme = await h.call<{ approvals: RequestSummary[] }>('GET', '/api/approvals?tenant=acme&state=pending', TOKENS.lead);
    expect(acme.status).toBe(200);
    const ids = acme.body.approvals.map((a) => a.proposal_id);
    expect(ids.indexOf(newer.proposal_id)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(newer.proposal_id)).toBeLessThan(ids.indexOf(older.proposal_id));
    expect(ids).not.toContain(globex.proposal_id);
    const summary = acme.body.approvals.find((a) => a.proposal_id === newer.proposal_id);
    expect(summary).toMatchObject({
      state: 'pending',
      tenant: 'acme',
      tool: 'commit_address_change.v2',
      may_decide: true,
      approver_role: 'support-lead',
    });
    expect(summary?.time_left_ms).toBeGreaterThan(60_000);
    expect(summary).not.toHaveProperty('request');

    const viewer = await h.call<{ approvals: RequestSummary[] }>('GET', '/api/approvals', TOKENS.viewer);
    expect(viewer.body.approvals.map((a) => a.tenant)).not.toContain('globex');
    expect(viewer.body.approvals.find((a) => a.proposal_id === newer.proposal_id)?.may_not_because).toBe('UNAUTHORIZED_APPROVER');

    expect((await h.call<ErrorBody>('GET', '/api/approvals?tenant=globex', TOKENS.viewer)).status).toBe(404);
    expect((await h.call<ErrorBody>('GET', `/api/approvals/${globex.proposal_id}`, TOKENS.viewer)).status).toBe(404);
    expect((await h.call<ErrorBody>('GET', '/api/approvals', null)).status).toBe(401);
    expect((await h.call<ErrorBody>('GET', '/api/approvals', 'not-a-token')).body.error.code).toBe('UNAUTHORIZED');
  });

  it('shows the stored canonical request, byte for byte, with its time left', async () => {
    const request = approvalRequest();
    await h.submit(request);
    const detail = await h.call<RequestDetail>('GET', `/api/approvals/${request.proposal_id}`, TOKENS.lead);
    expect(detail.status).toBe(200);
    expect(detail.body.request).toEqual(request);
    expect(detail.body.request.arguments).toBe(request.arguments);
    expect(detail.body.time_left_ms).toBeGreaterThan(0);
    expect(detail.body.time_left_ms).toBeLessThanOrEqual(request.expires_at - request.requested_at);
  });

  it('approves: one decision, one execution order carrying the grant, and the approval record in Redis', async () => {
    const request = approvalRequest();
    await h.submit(request);
    const before = Date.now();
    const reply = await approve(request.proposal_id, TOKENS.lead);
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ state: 'approved', decided_by: IDENTITIES.lead, published: true });
    const approvalId = reply.body.approval_id ?? '';
    expect(approvalId).toMatch(/^apr_[0-9a-f]{24}$/);

    const decision = await h.events.waitFor('approvalsDecided', (d) => d.proposal_id === request.proposal_id, 'the decision');
    expect(decision).toMatchObject({
      schema_version: 1,
      command_id: request.command_id,
      run_id: request.run_id,
      tenant: 'acme',
      tool: request.tool,
      decision: 'approved',
      decided_by: IDENTITIES.lead,
      reason: null,
      arguments_sha256: request.arguments_sha256,
      target_type: 'customer',
      target_id: 'C-1842',
      target_version: 17,
    });
    expect(decision.decision_id).toMatch(/^dec_/);
    // Signed by the service, so a reader of the audit topic can tell it from a forgery.
    expect(verifyDecision(decision, h.events.headersOf(decision), TEST_KEY_RING)).toMatchObject({ ok: true });
    expect(verifyDecision({ ...decision, decided_by: 'mallory' }, h.events.headersOf(decision), TEST_KEY_RING)).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
    expect(decision.decided_at).toBeGreaterThanOrEqual(before - 1_000);
    const expiresAt = decision.approval_expires_at ?? 0;
    expect(expiresAt - decision.decided_at).toBe(10 * 60_000);

    const order = await h.events.waitFor('execute', (o) => o.proposal_id === request.proposal_id, 'the execution order');
    expect(order.order_id).toMatch(/^ord_/);
    expect(order.issued_at).toBeGreaterThanOrEqual(decision.decided_at);
    const commit = customerSupportCatalog().get('commit_address_change.v2');
    expect(commit).toBeDefined();
    expect(order).toEqual({
      schema_version: 1,
      order_id: order.order_id,
      command_id: request.command_id,
      run_id: request.run_id,
      tenant: 'acme',
      principal: request.principal,
      environment: 'production',
      tool: 'commit_address_change.v2',
      effect: 'write',
      arguments: request.arguments,
      arguments_sha256: request.arguments_sha256,
      proposal_id: request.proposal_id,
      approval: {
        approval_id: approvalId,
        approved_by: IDENTITIES.lead,
        approved_at: decision.decided_at,
        expires_at: expiresAt,
        arguments_sha256: request.arguments_sha256,
        target_version: 17,
      },
      idempotency_key: `${request.run_id}:${request.proposal_id}:commit`,
      deadline_at: expiresAt,
      issued_at: order.issued_at,
      on_behalf_of: null,
      // The contract the approval service holds for the tool: the executor runs no other.
      contract_sha256: commit === undefined ? null : contractSha256(commit),
    });

    const stored = await h.approvals.get(approvalId);
    expect(stored).toEqual({
      record: {
        approval_id: approvalId,
        proposal_id: request.proposal_id,
        arguments_sha256: request.arguments_sha256,
        target_type: 'customer',
        target_id: 'C-1842',
        target_version: 17,
        approved_by: IDENTITIES.lead,
        approver_issuer: TOKEN_FILE_ISSUER,
        approver_subject: IDENTITIES.lead,
        approver_roles: ['support-lead'],
        required_role: 'support-lead',
        approved_at: decision.decided_at,
        expires_at: expiresAt,
      },
      consumedBy: null,
    });
    const { rows } = await h.db.query<{ state: string; published: boolean }>(
      `SELECT state, published_at IS NOT NULL AS published FROM ${h.t.requests} WHERE proposal_id = $1`,
      [request.proposal_id],
    );
    expect(rows).toEqual([{ state: 'approved', published: true }]);
    expect((await approve(request.proposal_id, TOKENS.ops)).body.error).toMatchObject({ code: 'NOT_PENDING', state: 'approved' });
  });

  it('never lets an approval outlive the request it answers', async () => {
    const request = approvalRequest({ expires_at: Date.now() + 60_000 });
    await h.submit(request);
    const reply = await approve(request.proposal_id, TOKENS.lead);
    expect(reply.body.approval_expires_at).toBe(request.expires_at);
    const order = await h.events.waitFor('execute', (o) => o.proposal_id === request.proposal_id);
    expect(order.deadline_at).toBe(request.expires_at);
  });

  it('refuses an approver without the required role with 403 and decides nothing', async () => {
    const request = approvalRequest({ approver_role: 'ops-admin' });
    await h.submit(request);
    const refused = await approve(request.proposal_id, TOKENS.lead);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('UNAUTHORIZED_APPROVER');
    const viewer = await approve(request.proposal_id, TOKENS.viewer);
    expect(viewer.status).toBe(403);

    // The request is still pending, and the next (authorized) decision is the only one published.
    const detail = await h.call<RequestDetail>('GET', `/api/approvals/${request.proposal_id}`, TOKENS.lead);
    expect(detail.body.state).toBe('pending');
    expect((await approve(request.proposal_id, TOKENS.ops)).status).toBe(200);
    await h.events.waitFor('execute', (o) => o.proposal_id === request.proposal_id);
    // Decisions and orders are separate topics, read by separate consumers: await the decision itself.
    // Any decision published before it for this tenant sits before it on the same partition.
    await h.events.waitFor('approvalsDecided', (d) => d.proposal_id === request.proposal_id);
    expect(decisionsOf(request.proposal_id).map((d) => d.decided_by)).toEqual([IDENTITIES.ops]);
  });

  it('refuses the person the run acts for (self-approval) and hides other tenants behind 404', async () => {
    const request = approvalRequest({ on_behalf_of: { issuer: TOKEN_FILE_ISSUER, subject: IDENTITIES.agentOwner, name: 'Otto Owner' } });
    await h.submit(request);
    const self = await approve(request.proposal_id, TOKENS.agentOwner);
    expect(self.status).toBe(403);
    expect(self.body.error.code).toBe('SELF_APPROVAL');
    const otherTenant = await approve(request.proposal_id, TOKENS.globexOnly);
    expect(otherTenant.status).toBe(404);
    expect(otherTenant.body.error.code).toBe('NOT_FOUND');
    expect((await approve(request.proposal_id, 'wrong-token')).status).toBe(401);
    expect((await approve('p_does_not_exist', TOKENS.lead)).status).toBe(404);
    const { rows } = await h.db.query<{ state: string }>(`SELECT state FROM ${h.t.requests} WHERE proposal_id = $1`, [request.proposal_id]);
    expect(rows[0]?.state).toBe('pending');
  });

  it('refuses a decision on another hash or target version than the stored request with 409 PROPOSAL_MISMATCH, deciding nothing', async () => {
    const request = approvalRequest();
    await h.submit(request);
    const decide = (decision: 'approve' | 'reject', shown: { arguments_sha256?: string; target_version?: number | null }) =>
      decideAs<ErrorBody>(h.url(), request.proposal_id, decision, TOKENS.lead, {
        shown,
        ...(decision === 'reject' ? { reason: 'stale' } : {}),
      });
    const refusals = [
      await decide('approve', { arguments_sha256: 'e'.repeat(64) }),
      await decide('approve', { target_version: 16 }),
      await decide('approve', { target_version: null }),
      await decide('reject', { arguments_sha256: 'e'.repeat(64) }),
    ];
    expect(refusals.map((r) => [r.status, r.body.error.code])).toEqual(Array(4).fill([409, 'PROPOSAL_MISMATCH']));
    expect((await approve(request.proposal_id, TOKENS.lead)).status).toBe(200);
    await h.events.waitFor('approvalsDecided', (d) => d.proposal_id === request.proposal_id);
    expect(decisionsOf(request.proposal_id).map((d) => d.decision)).toEqual(['approved']);
  });

  it('requires a reason of 1..500 characters to reject', async () => {
    const request = approvalRequest();
    await h.submit(request);
    expect((await reject(request.proposal_id, TOKENS.lead, {})).status).toBe(400);
    expect((await reject(request.proposal_id, TOKENS.lead, { reason: '   ' })).status).toBe(400);
    const long = await reject(request.proposal_id, TOKENS.lead, { reason: 'x'.repeat(501) });
    expect(long.status).toBe(400);
    expect(long.body.error.code).toBe('INVALID_REQUEST');
    expect((await reject(request.proposal_id, 'wrong-token', {})).status).toBe(401);
    const { rows } = await h.db.query<{ state: string }>(`SELECT state FROM ${h.t.requests} WHERE proposal_id = $1`, [request.proposal_id]);
    expect(rows[0]?.state).toBe('pending');
  });

  it('rejects with a reason that reaches the agent as APPROVAL_REJECTED, naming the preview tool', async () => {
    const request = approvalRequest();
    await h.submit(request);
    const reason = 'Customer asked to keep the old address until March';
    const reply = await reject(request.proposal_id, TOKENS.lead, { reason });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ state: 'rejected', reason, decided_by: IDENTITIES.lead, approval_id: null });

    const result = await h.events.waitFor('results', (r) => r.command_id === request.command_id, 'the rejection result');
    expect(result).toMatchObject({
      run_id: request.run_id,
      tenant: 'acme',
      tool: request.tool,
      status: 'error',
      arguments_sha256: request.arguments_sha256,
    });
    expect(result.error).toMatchObject({ code: 'APPROVAL_REJECTED', retryable: false, next: 'preview_address_change.v1' });
    expect(result.error?.message).toContain(reason);
    const decision = await h.events.waitFor('approvalsDecided', (d) => d.proposal_id === request.proposal_id);
    expect(decision).toMatchObject({ decision: 'rejected', reason, decided_by: IDENTITIES.lead, approval_expires_at: null });
    expect(ordersOf(request.proposal_id)).toEqual([]);
  });

  it('turns two concurrent approvals into exactly one decision and one order', async () => {
    const request = approvalRequest();
    await h.submit(request);
    const replies = await Promise.all([approve(request.proposal_id, TOKENS.lead), approve(request.proposal_id, TOKENS.ops)]);
    expect(replies.map((r) => r.status).sort()).toEqual([200, 409]);
    const winner = replies.find((r) => r.status === 200);
    await h.events.waitFor('execute', (o) => o.proposal_id === request.proposal_id);
    // A later event on the same partition (same tenant key) proves nothing else was published before it.
    const marker = approvalRequest();
    await h.submit(marker);
    await reject(marker.proposal_id, TOKENS.lead, { reason: 'marker' });
    await h.events.waitFor('approvalsDecided', (d) => d.proposal_id === marker.proposal_id);
    expect(decisionsOf(request.proposal_id)).toHaveLength(1);
    expect(ordersOf(request.proposal_id)).toHaveLength(1);
    expect(ordersOf(request.proposal_id)[0]?.approval?.approval_id).toBe(winner?.body.approval_id);
  });

  it('expires an unanswered request: APPROVAL_EXPIRED to the agent, an expired decision, and 409 to a late approver', async () => {
    const request = approvalRequest({ expires_at: Date.now() + 1_500 });
    await h.submit(request);
    const result = await h.events.waitFor('results', (r) => r.command_id === request.command_id, 'the expiry result');
    expect(result.status).toBe('error');
    expect(result.error).toMatchObject({ code: 'APPROVAL_EXPIRED', retryable: false, next: 'preview_address_change.v1' });
    const decision = await h.events.waitFor('approvalsDecided', (d) => d.proposal_id === request.proposal_id);
    expect(decision).toMatchObject({ decision: 'expired', decided_by: null, reason: null, approval_expires_at: null });
    expect(decision.decided_at).toBeGreaterThanOrEqual(request.expires_at);

    const late = await approve(request.proposal_id, TOKENS.lead);
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ code: 'APPROVAL_EXPIRED', state: 'expired' });
    expect(ordersOf(request.proposal_id)).toEqual([]);
  });

  it('answers a commit re-sent after approval with a second order under the same approval', async () => {
    const request = approvalRequest();
    await h.submit(request);
    const reply = await approve(request.proposal_id, TOKENS.lead);
    const first = await h.events.waitFor('execute', (o) => o.command_id === request.command_id);

    const resent = { ...request, command_id: `cmd-resent-${request.proposal_id}` };
    await h.publish(resent);
    const second = await h.events.waitFor('execute', (o) => o.command_id === resent.command_id, 'the re-issued order');
    expect(second.order_id).not.toBe(first.order_id);
    expect(second.approval).toEqual(first.approval);
    expect(second.approval?.approval_id).toBe(reply.body.approval_id);
    expect(second.idempotency_key).toBe(first.idempotency_key);
    expect(second.arguments).toBe(first.arguments);
    await h.events.waitFor('approvalsDecided', (d) => d.proposal_id === request.proposal_id);
    expect(decisionsOf(request.proposal_id)).toHaveLength(1);
  });

  it('lets the decision answer the latest command when a commit is re-sent while pending', async () => {
    const request = approvalRequest();
    await h.submit(request);
    const resent = { ...request, command_id: `cmd-resent-${request.proposal_id}` };
    await h.submit(resent);
    await reject(request.proposal_id, TOKENS.lead, { reason: 'Wrong customer' });
    const result = await h.events.waitFor('results', (r) => r.command_id === resent.command_id);
    expect(result.error?.code).toBe('APPROVAL_REJECTED');
    const again = { ...request, command_id: `cmd-third-${request.proposal_id}` };
    await h.publish(again);
    const third = await h.events.waitFor('results', (r) => r.command_id === again.command_id, 'the rejection of a re-sent commit');
    expect(third.error?.message).toContain('Wrong customer');
  });

  it('dead-letters a request whose arguments do not hash to its signed arguments_sha256: it stores and answers nothing', async () => {
    const request = approvalRequest({ arguments_sha256: 'f'.repeat(64) });
    await h.publish(request);
    const dead = await readRaw(h.topics.kafka, dlqTopicOf(h.topics.topics.approvalsRequested), 1);
    const mine = dead.find((d) => d.headers?.[DLQ_HEADER.reason]?.toString() === 'untrusted_arguments_altered');
    expect(mine).toBeDefined();
    expect((await h.call('GET', `/api/approvals/${request.proposal_id}`, TOKENS.lead)).status).toBe(404);
    expect(h.events.seen.results.filter((r) => r.command_id === request.command_id)).toEqual([]);
  });

  it('republishes a decision whose events were never confirmed (the outbox), with the same ids', async () => {
    const request = approvalRequest();
    await h.submit(request);
    await approve(request.proposal_id, TOKENS.lead);
    const first = await h.events.waitFor('execute', (o) => o.proposal_id === request.proposal_id);
    // As if the process had died after the UPDATE and before the publish was confirmed.
    await h.db.query(
      `UPDATE ${h.t.requests} SET published_at = NULL, publish_claimed_at = now() - interval '1 hour' WHERE proposal_id = $1`,
      [request.proposal_id],
    );
    await h.service.sweep();
    await eventually(() => (ordersOf(request.proposal_id).length === 2 ? true : undefined), 20_000, 'the republished order');
    const [, again] = ordersOf(request.proposal_id);
    expect(again?.order_id).toBe(first.order_id);
    expect(again?.approval).toEqual(first.approval);
    await eventually(() => (decisionsOf(request.proposal_id).length === 2 ? true : undefined), 20_000, 'the republished decision');
    expect(new Set(decisionsOf(request.proposal_id).map((d) => d.decision_id)).size).toBe(1);
  });

  it('retries an unconfirmed refusal without a second answer on the results topic, and publishes one that is not there', async () => {
    const request = approvalRequest();
    await h.submit(request);
    await reject(request.proposal_id, TOKENS.lead, { reason: 'Wrong customer' });
    const first = await h.events.waitFor('results', (r) => r.command_id === request.command_id, 'the rejection');
    const unconfirmed = (also = '') =>
      h.db.query(
        `UPDATE ${h.t.requests} SET published_at = NULL, publish_claimed_at = now() - interval '1 hour'${also} WHERE proposal_id = $1`,
        [request.proposal_id],
      );
    const answersOf = (commandId: string) => h.events.seen.results.filter((r) => r.command_id === commandId);
    // A later answer on the same partition (same run, so same key) proves nothing else came before it.
    const markerAfter = async (): Promise<void> => {
      const marker = approvalRequest({ run_id: request.run_id });
      await h.submit(marker);
      await reject(marker.proposal_id, TOKENS.lead, { reason: 'marker' });
      await h.events.waitFor('results', (r) => r.command_id === marker.command_id, 'the marker');
    };

    // As if the process had died after publishing and before the row was marked published.
    await unconfirmed();
    await h.service.sweep();
    await eventually(() => (decisionsOf(request.proposal_id).length === 2 ? true : undefined), 20_000, 'the republished decision');
    await markerAfter();
    expect(answersOf(request.command_id)).toEqual([first]);

    // A refusal that is not on the topic (here: the stored decision time differs from the one out) goes out.
    await unconfirmed(`, decided_at = decided_at - interval '1 second'`);
    await h.service.sweep();
    const again = await eventually(
      () => (answersOf(request.command_id).length === 2 ? answersOf(request.command_id)[1] : undefined),
      20_000,
      'the refusal published again',
    );
    expect(Number(again.completed_at)).toBe(Number(first.completed_at) - 1_000);
    expect(again.error).toEqual(first.error);
  });

  it('refuses a request naming a stored proposal for another run ARGUMENTS_MISMATCH, once however often it comes', async () => {
    const request = approvalRequest();
    await h.submit(request);
    const other = { ...request, command_id: `${request.command_id}-other`, run_id: `${request.run_id}-other` };
    await h.publish(other);
    const answersOf = (commandId: string) => h.events.seen.results.filter((r) => r.command_id === commandId);
    const refusal = await h.events.waitFor('results', (r) => r.command_id === other.command_id, 'the refusal');
    expect(refusal).toMatchObject({ status: 'error', completed_at: other.requested_at, error: { code: 'ARGUMENTS_MISMATCH' } });
    // Delivered again, as after a stop before its offset was committed.
    await h.publish(other);
    // A later answer on the same partition (same run, so same key) proves nothing else came before it.
    const marker = approvalRequest({ run_id: other.run_id });
    await h.submit(marker);
    await reject(marker.proposal_id, TOKENS.lead, { reason: 'marker' });
    await h.events.waitFor('results', (r) => r.command_id === marker.command_id, 'the marker');
    expect(answersOf(other.command_id)).toEqual([refusal]);
    // The stored proposal is untouched, and still waits for a person.
    const detail = await h.call<RequestDetail>('GET', `/api/approvals/${request.proposal_id}`, TOKENS.lead);
    expect(detail.body).toMatchObject({ state: 'pending', request });
  });

  it('keeps pending requests across a restart on the same schema', async () => {
    const request = approvalRequest();
    await h.submit(request);
    await h.restart();
    const detail = await h.call<RequestDetail>('GET', `/api/approvals/${request.proposal_id}`, TOKENS.lead);
    expect(detail.status).toBe(200);
    expect(detail.body.state).toBe('pending');
    expect(detail.body.request).toEqual(request);
    expect((await approve(request.proposal_id, TOKENS.lead)).status).toBe(200);
    await h.events.waitFor('execute', (o) => o.proposal_id === request.proposal_id);
  });

  it('reports ready when PostgreSQL, Kafka, the registry and Redis answer', async () => {
    expect((await h.call('GET', '/readyz', null)).body).toEqual({
      ready: true,
      checks: { postgres: 'ok', kafka: 'ok', registry: 'ok', redis: 'ok' },
    });
    expect((await h.call('GET', '/healthz', null)).body).toEqual({ status: 'up' });
  });
});
