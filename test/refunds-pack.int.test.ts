// A platform team's own tool pack, hosted by Gatehouse with no change to any service: the refunds
// example (written against @gatehouse/sdk only) driven through the real policy service → approval
// service → executor, over its own system of record on PostgreSQL, Kafka, the registry and Redis.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refundsPack } from '@gatehouse/example-refunds';
import { refundsConfigFromEnv, SEED, startRefundsService } from '@gatehouse/example-refunds-service';
import type { RunningRefundsService } from '@gatehouse/example-refunds-service';
import { idempotencyKeyOf } from '@gatehouse/policy';
import { ProposalStore } from '@gatehouse/state';
import type { Run } from '@gatehouse/state';
import { DATABASE_URL } from './support/approval.js';
import { decideAs } from './support/decide.js';
import { startPackGatehouse } from './support/pack-harness.js';
import type { PackGatehouse } from './support/pack-harness.js';
import { TEST_ASSERTION_ISSUER, testAssertion, testJwksFile } from './support/signing.js';
import { logger } from './support/stack.js';

/** The demo approvers' tokens, published in examples/refunds/README.md (their hashes are in the pack's approvers.json). */
const DEMO = {
  refundsLead: { identity: 'demo-refunds-lead@acme.example', token: 'demo-refunds-lead-6a791eb0032fd9c61e12b9842545f8de' },
  finance: { identity: 'demo-finance@acme.example', token: 'demo-finance-515a5c352f327d280081af3ed04618c8' },
} as const;

interface OrderRow {
  readonly refunded_minor: number;
  readonly version: number;
  readonly refunds: number;
}

interface ApprovalDetail {
  readonly state: string;
  readonly approver_role: string;
  readonly decided_by: string | null;
  readonly request: {
    readonly tool: string;
    readonly effect: string;
    readonly target: { readonly type: string; readonly id: string; readonly version: number | null };
    readonly diff: {
      readonly changes: readonly { readonly field: string; readonly before: string | null; readonly after: string | null }[];
      readonly amount: { readonly minor: number; readonly currency: string } | null;
      readonly affected_records: number;
      readonly irreversible: readonly string[];
    };
  };
}

describe('the refunds pack, hosted by the unchanged policy service, approval service and executor', () => {
  const schema = `t_refunds_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  let refunds: RunningRefundsService;
  let g: PackGatehouse;
  let agent: Run;

  beforeAll(async () => {
    refunds = await startRefundsService({
      ...refundsConfigFromEnv({
        REFUNDS_DATABASE_URL: DATABASE_URL,
        REFUNDS_DB_SCHEMA: schema,
        REFUNDS_PORT: '0',
        REFUNDS_ASSERTION_KEYS: testJwksFile(),
        REFUNDS_ASSERTION_ISSUER: TEST_ASSERTION_ISSUER,
      }),
      logger,
    });
    g = await startPackGatehouse('refunds', refundsPack, { env: { REFUNDS_URL: refunds.url } });
    agent = await g.createRun('refunds-agent', { principal: 'agent:refunds-bot' });
  });
  afterAll(async () => {
    await g?.stop();
    if (refunds !== undefined) {
      await refunds.db.query(`DROP SCHEMA IF EXISTS ${refunds.tables.schema} CASCADE`);
      await refunds.stop();
    }
  });

  /** The order's row and how many refunds it has, read straight from PostgreSQL. */
  async function orderRow(orderId: string): Promise<OrderRow> {
    const { rows } = await refunds.db.query<{ refunded_minor: string; version: number; refunds: string }>(
      `SELECT o.refunded_minor, o.version, (SELECT count(*) FROM ${refunds.tables.refunds} r WHERE r.order_id = o.order_id) AS refunds
       FROM ${refunds.tables.orders} o WHERE o.order_id = $1`,
      [orderId],
    );
    const row = rows[0];
    if (row === undefined) throw new Error(`no order ${orderId}`);
    return { refunded_minor: Number(row.refunded_minor), version: row.version, refunds: Number(row.refunds) };
  }

  async function preview(orderId: string, minor: number, currency: string, reason: string): Promise<string> {
    const result = await g.call(agent, 'preview_refund.v1', { order_id: orderId, amount: { minor, currency }, reason });
    if (!result.ok) throw new Error(`preview refused: ${result.error.code} ${result.error.message}`);
    return (result.result as { proposal_id: string }).proposal_id;
  }

  it('gives a refunds-readonly run the read only, refusing the commit with what it may call', async () => {
    const reader = await g.createRun('refunds-readonly');
    expect(reader.capabilities).toEqual(['get_order_refunds.v1']);
    expect([...agent.capabilities].sort()).toEqual(['commit_refund.v1', 'get_order_refunds.v1', 'preview_refund.v1']);
    const refused = await g.call(reader, 'commit_refund.v1', { proposal_id: 'p_000000000000000000000000' });
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.error).toMatchObject({ code: 'CAPABILITY_DENIED', permitted: ['get_order_refunds.v1'] });
  });

  it('reads an order with its refundable balance and refunds, never the fields kept for trusted callers', async () => {
    const read = await g.call(agent, 'get_order_refunds.v1', { order_id: SEED.fullyRefundedOrder.orderId });
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.result).toEqual({
      order_id: 'ORD-1004',
      total: { minor: 4_500, currency: 'GBP' },
      refunded: { minor: 4_500, currency: 'GBP' },
      refundable: { minor: 0, currency: 'GBP' },
      version: 4,
      updated_at: '2026-08-01T09:30:00.000Z',
      refunds: [
        {
          refund_id: 'RF-5EED00001004',
          amount: { minor: 4_500, currency: 'GBP' },
          reason: 'not_delivered',
          refunded_at: '2026-08-01T09:30:00.000Z',
        },
      ],
    });
    const nothingLeft = await g.call(agent, 'preview_refund.v1', {
      order_id: 'ORD-1004',
      amount: { minor: 100, currency: 'GBP' },
      reason: 'goodwill',
    });
    expect(nothingLeft.ok === false && nothingLeft.error).toMatchObject({
      code: 'INVALID_ARGUMENT',
      field: '/amount/minor',
      retryable: false,
    });
    const otherTenant = await g.call(agent, 'get_order_refunds.v1', { order_id: SEED.otherTenantOrder.orderId });
    expect(otherTenant.ok === false && otherTenant.error.code).toBe('NOT_FOUND');
  });

  it('previews a refund, holds the commit for a refunds lead, then refunds once and answers a retry with the stored result', async () => {
    const order = SEED.smallOrder;
    const proposalId = await preview(order.orderId, 2_500, 'EUR', 'damaged');
    const { pending, settled } = await g.commitPending(agent, 'commit_refund.v1', proposalId, DEMO.refundsLead.token);
    expect(pending).toMatchObject({ proposal_id: proposalId, approver_role: 'refunds-lead' });
    expect(await orderRow(order.orderId)).toEqual({ refunded_minor: 0, version: 1, refunds: 0 });

    // The approver sees the stored canonical proposal: the amount, the refunded totals, what cannot be undone.
    const shown = await g.approvals<ApprovalDetail>('GET', `/api/approvals/${proposalId}`, DEMO.refundsLead.token);
    expect(shown.body).toMatchObject({ state: 'pending', approver_role: 'refunds-lead' });
    expect(shown.body.request).toMatchObject({
      tool: 'commit_refund.v1',
      target: { type: 'order', id: 'ORD-1001', version: 1 },
      effect: 'Refund 25.00 EUR of order ORD-1001 to the customer (reason: damaged); refunded so far 0.00 EUR → 25.00 EUR.',
      diff: { amount: { minor: 2_500, currency: 'EUR' }, affected_records: 1, irreversible: ['money leaves the merchant'] },
    });
    const parsed = (text: string | null): unknown => JSON.parse(text ?? 'null');
    expect(shown.body.request.diff.changes.map((c) => [c.field, parsed(c.before), parsed(c.after)])).toEqual([
      ['refunded', { minor: 0, currency: 'EUR' }, { minor: 2_500, currency: 'EUR' }],
      ['refundable', { minor: 12_000, currency: 'EUR' }, { minor: 9_500, currency: 'EUR' }],
    ]);

    expect((await decideAs(g.approval.url, proposalId, 'approve', DEMO.refundsLead.token)).status).toBe(200);
    const committed = await settled;
    expect(committed.ok).toBe(true);
    if (!committed.ok) return;
    expect(committed.result).toMatchObject({
      order_id: 'ORD-1001',
      amount: { minor: 2_500, currency: 'EUR' },
      reason: 'damaged',
      refunded_before: { minor: 0, currency: 'EUR' },
      refunded_after: { minor: 2_500, currency: 'EUR' },
      refundable_after: { minor: 9_500, currency: 'EUR' },
      previous_version: 1,
      new_version: 2,
    });
    expect(await orderRow(order.orderId)).toEqual({ refunded_minor: 2_500, version: 2, refunds: 1 });
    // The executor's key went downstream and was stored in the refund's own transaction.
    const key = idempotencyKeyOf(agent.run_id, proposalId);
    const stored = await refunds.db.query<{ status: string; refund_key: string }>(
      `SELECT k.status, r.idempotency_key AS refund_key FROM ${refunds.tables.idempotencyKeys} k JOIN ${refunds.tables.refunds} r ON r.idempotency_key = k.key WHERE k.key = $1`,
      [key],
    );
    expect(stored.rows).toEqual([{ status: 'succeeded', refund_key: key }]);

    const retried = await g.call(agent, 'commit_refund.v1', { proposal_id: proposalId });
    expect(retried.ok && retried.result).toEqual(committed.result);
    expect(await orderRow(order.orderId)).toEqual({ refunded_minor: 2_500, version: 2, refunds: 1 });
  });

  it('answers VERSION_CONFLICT, changes nothing and leaves the proposal unused when the order changed after the preview', async () => {
    const order = SEED.partlyRefundedOrder;
    const proposalId = await preview(order.orderId, 1_000, 'USD', 'customer_request');
    // Another system refunds the same order meanwhile, with its own key.
    const backOffice = {
      order_id: order.orderId,
      expected_version: order.version,
      amount: { minor: 500, currency: 'USD' },
      reason: 'damaged',
    };
    const backOfficeKey = `backoffice-${randomUUID()}`;
    const concurrent = await fetch(`${refunds.url}/orders/${order.orderId}/refunds`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await testAssertion('refunds', { call: 'write', method: 'POST', target: `/orders/${order.orderId}/refunds`, idempotencyKey: backOfficeKey, body: backOffice })}`,
        'x-tenant': 'acme',
        'idempotency-key': backOfficeKey,
        'content-type': 'application/json',
      },
      body: JSON.stringify(backOffice),
    });
    expect(concurrent.status).toBe(201);
    expect(await orderRow(order.orderId)).toEqual({ refunded_minor: 2_500, version: 4, refunds: 2 });

    const { settled } = await g.commitPending(agent, 'commit_refund.v1', proposalId, DEMO.refundsLead.token);
    expect((await decideAs(g.approval.url, proposalId, 'approve', DEMO.refundsLead.token)).status).toBe(200);
    const result = await settled;
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({
      code: 'VERSION_CONFLICT',
      retryable: false,
      field: '/expected_version',
      next: 'preview_refund.v1',
      details: { current_version: 4 },
    });
    expect(await orderRow(order.orderId)).toEqual({ refunded_minor: 2_500, version: 4, refunds: 2 });
    expect((await new ProposalStore(g.redis, g.keys).get(proposalId))?.state).toBe('open');
  });

  it('sends a refund over 500.00 to finance, refusing a refunds lead’s approval with 403, and refunds once finance approves', async () => {
    const order = SEED.largeOrder;
    const proposalId = await preview(order.orderId, 75_000, 'EUR', 'not_delivered');
    const { pending, settled } = await g.commitPending(agent, 'commit_refund.v1', proposalId, DEMO.finance.token);
    expect(pending.approver_role).toBe('finance');

    const byLead = await decideAs<{ error: { code: string } }>(g.approval.url, proposalId, 'approve', DEMO.refundsLead.token);
    expect(byLead.status).toBe(403);
    expect(byLead.body.error.code).toBe('UNAUTHORIZED_APPROVER');
    expect((await g.approvals<ApprovalDetail>('GET', `/api/approvals/${proposalId}`, DEMO.finance.token)).body.state).toBe('pending');
    expect(await orderRow(order.orderId)).toEqual({ refunded_minor: 0, version: 2, refunds: 0 });

    expect((await decideAs(g.approval.url, proposalId, 'approve', DEMO.finance.token)).status).toBe(200);
    const committed = await settled;
    expect(committed.ok && committed.result).toMatchObject({
      order_id: 'ORD-1002',
      amount: { minor: 75_000, currency: 'EUR' },
      previous_version: 2,
      new_version: 3,
    });
    expect(await orderRow(order.orderId)).toEqual({ refunded_minor: 75_000, version: 3, refunds: 1 });
    const decided = await g.approvals<ApprovalDetail>('GET', `/api/approvals/${proposalId}`, DEMO.finance.token);
    expect(decided.body).toMatchObject({ state: 'approved', decided_by: DEMO.finance.identity });
  });

  it('keeps the service’s own idempotency contract: the same key and body replay, another body under the key is 409', async () => {
    const key = `direct-${randomUUID()}`;
    const post = async (minor: number) => {
      const body = {
        order_id: SEED.spareOrder.orderId,
        expected_version: SEED.spareOrder.version,
        amount: { minor, currency: 'EUR' },
        reason: 'goodwill',
      };
      return fetch(`${refunds.url}/orders/${SEED.spareOrder.orderId}/refunds`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${await testAssertion('refunds', { call: 'write', method: 'POST', target: `/orders/${SEED.spareOrder.orderId}/refunds`, idempotencyKey: key, body })}`,
          'x-tenant': 'acme',
          'idempotency-key': key,
          'content-type': 'application/json',
        },
        body: JSON.stringify(body),
      });
    };
    const first = await post(1_000);
    const firstBody: unknown = await first.json();
    const again = await post(1_000);
    expect([first.status, again.status, again.headers.get('idempotent-replayed')]).toEqual([201, 201, 'true']);
    expect(await again.json()).toEqual(firstBody);
    const other = await post(2_000);
    expect(other.status).toBe(409);
    expect(await other.json()).toMatchObject({ error: { code: 'IDEMPOTENCY_KEY_REUSED' } });
    expect(await orderRow(SEED.spareOrder.orderId)).toEqual({ refunded_minor: 1_000, version: 2, refunds: 1 });

    const statusOf = async (tenant: string) =>
      fetch(`${refunds.url}/operations/${key}`, {
        headers: {
          authorization: `Bearer ${await testAssertion('refunds', { call: 'status', method: 'GET', target: `/operations/${key}`, tenant, idempotencyKey: key })}`,
          'x-tenant': tenant,
        },
      });
    const status = await statusOf('acme');
    expect(await status.json()).toMatchObject({ status: 'succeeded', response: firstBody });
    const elsewhere = await statusOf('globex');
    expect(elsewhere.status).toBe(404);
  });
});
