import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog, defineTool } from '@gatehouse/contracts';
import type { CallResult } from '@gatehouse/client';
import type { Run } from '@gatehouse/state';
import { getCustomer, customerSupportImplementations } from '@gatehouse/example-customer-support';
import { EventPublisher } from '@gatehouse/events';
import type { ApprovalDecision, ToolResult } from '@gatehouse/events';
import { formatReport, parseTrace, recordTrace, replayTrace, traceJson } from '@gatehouse/trace';
import { signedHeaders, TEST_KEY_RING } from './support/signing.js';
import type { Trace } from '@gatehouse/trace';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';

const SUBJECT = 'Refund for order 7781 approved';
const BODY = 'Dear Marta, your refund of 42.10 EUR is on its way.';
const NICKNAME = 'the customer who called twice';

const referenceTools = () => customerSupportImplementations.map((i) => i.contract);
const includeOrders = { type: 'boolean' } as const;

/** Every string leaf of a value. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(strings);
  return [];
}

const view = (result: CallResult): unknown => (result.ok ? result.result : undefined);

describe('trace record and replay over the real stack', () => {
  let g: Gatehouse;
  let run: Run;
  const results: CallResult[] = [];
  let trace: Trace;

  beforeAll(async () => {
    g = await startGatehouse('trace-rec');
    run = await g.createRun('support-agent');
    const call = (tool: string, args: unknown) => g.client.call(tool, args, { runId: run.run_id, tenant: run.tenant });
    results.push(await call('get_customer.v1', { customer_id: 'C-1842' }));
    results.push(await call('get_customer.v1', { customer_id: 'C-1842', nickname: NICKNAME }));
    const preview = await call('preview_customer_email.v1', { customer_id: 'C-1842', subject: SUBJECT, body: BODY });
    results.push(preview);
    if (!preview.ok) throw new Error(`the preview failed: ${preview.error.code}`);
    const { proposal_id: proposalId } = preview.result as { proposal_id: string };
    // The commit waits for a person that never comes: the pending answer is what the trace records.
    await new Promise<void>((resolve) => {
      void g.client.call(
        'send_customer_email.v1',
        { proposal_id: proposalId },
        { runId: run.run_id, tenant: run.tenant, onPending: () => resolve() },
      );
    });
    const other = await g.createRun('support-readonly');
    await g.client.call('get_customer.v1', { customer_id: 'C-1842' }, { runId: other.run_id, tenant: other.tenant });
    trace = await recordTrace({
      kafka: g.kafka,
      serde: g.serde,
      topics: g.topics,
      runId: run.run_id,
      catalog: g.catalog,
      until: { maxMs: 30_000 },
      keys: TEST_KEY_RING,
    });
  });
  afterAll(async () => {
    await g.stop();
  });

  it('records the run’s calls, decisions and result shapes, and nothing of another run', () => {
    expect(trace.run).toEqual({ run_id: run.run_id, tenant: run.tenant });
    expect(trace.calls.map((c) => [c.tool, c.decision.status, c.result.status])).toEqual([
      ['get_customer.v1', 'routed', 'ok'],
      ['get_customer.v1', 'refused', 'error'],
      ['preview_customer_email.v1', 'routed', 'ok'],
      ['send_customer_email.v1', 'pending_approval', 'pending_approval'],
    ]);
    const [read, refused, preview, send] = trace.calls;
    expect(refused?.decision).toEqual({ status: 'refused', code: 'INVALID_ARGUMENT', field: '/nickname' });
    expect(read?.result.fields).toEqual(Object.keys(view(results[0] as CallResult) as object).sort());
    expect(preview?.result.fields).toEqual(Object.keys(view(results[2] as CallResult) as object).sort());
    expect(send?.approval).toEqual({ decision: 'pending', role: 'support-lead', rule: 'customer-email-support-lead', on_behalf_of: null });
    expect(send?.policy?.environment).toBe('sandbox');
    expect(trace.calls.map((c) => c.command_id)).toEqual([...results.map((r) => r.commandId), send?.command_id]);
    expect(trace.catalog.tools.map((t) => t.address)).toEqual(g.catalog.tools().map((t) => t.address));
  });

  it('holds no free-text argument and no result value', () => {
    const text = traceJson(trace);
    expect(trace.calls[2]?.arguments).toEqual({
      customer_id: 'C-1842',
      subject: 'x'.repeat(SUBJECT.length),
      body: 'x'.repeat(BODY.length),
    });
    for (const secret of [SUBJECT, BODY, NICKNAME, 'Marta', 'refund']) expect(text).not.toContain(secret);
    // Ids an argument carries (pattern-constrained, kept by design): the customer, and the proposal
    // the preview returned and the commit was called with.
    const kept = new Set(['C-1842', (view(results[2] as CallResult) as { proposal_id: string }).proposal_id]);
    const values = results.flatMap((r) => strings(view(r))).filter((s) => s.length >= 3 && !kept.has(s));
    expect(values.length).toBeGreaterThan(5);
    for (const value of values) expect(text, value).not.toContain(value);
    expect(parseTrace(text)).toEqual(trace);
  });

  it('replays with no effect difference when get_customer gains a v2 with an optional field', () => {
    const v2 = defineTool({
      ...getCustomer,
      version: 2,
      input: { ...getCustomer.input, properties: { ...getCustomer.input.properties, include_orders: includeOrders } },
    });
    const report = replayTrace(trace, Catalog.load([...referenceTools(), v2]));
    expect(report.catalogChanged).toBe(true);
    expect(report.differences).toBe(0);
    expect(report.invariants.every((i) => i.holds)).toBe(true);
  });

  it('replays the break when a field is made required in place', () => {
    const changed = defineTool({
      ...getCustomer,
      input: {
        ...getCustomer.input,
        required: ['customer_id', 'include_orders'],
        properties: { ...getCustomer.input.properties, include_orders: includeOrders },
      },
    });
    const report = replayTrace(trace, Catalog.load(referenceTools().map((t) => (t.address === changed.address ? changed : t))));
    const read = report.calls[0];
    expect(read).toMatchObject({
      differs: true,
      before: { status: 'routed' },
      after: { status: 'refused', code: 'INVALID_ARGUMENT', field: '/include_orders' },
    });
    expect(report.calls.slice(1).map((c) => c.differs)).toEqual([false, false, false]);
    expect(report.differences).toBe(1);
    expect(report.invariants.find((i) => i.name === 'allowed-calls-stay-allowed')?.holds).toBe(false);
    expect(formatReport(report)).toContain('/include_orders');
  });

  it('leaves out a decision and a result that no key of the right service signed', async () => {
    const send = trace.calls[3];
    const proposalId = (view(results[2] as CallResult) as { proposal_id: string }).proposal_id;
    // Someone who can write to the audit topic claims the pending email was approved.
    const forged: ApprovalDecision = {
      schema_version: 1,
      decision_id: 'dec_forged',
      proposal_id: proposalId,
      command_id: send?.command_id ?? '',
      run_id: run.run_id,
      tenant: run.tenant,
      tool: 'send_customer_email.v1',
      decision: 'approved',
      decided_by: 'mallory',
      decided_at: Date.now(),
      reason: null,
      arguments_sha256: '0'.repeat(64),
      target_type: 'customer',
      target_id: 'C-1842',
      target_version: null,
      approval_expires_at: Date.now() + 60_000,
    };
    const forgedOk: ToolResult = {
      schema_version: 1,
      command_id: send?.command_id ?? '',
      run_id: run.run_id,
      tenant: run.tenant,
      tool: 'send_customer_email.v1',
      status: 'ok',
      operation_id: 'op_forged',
      result: '{"sent":true}',
      error: null,
      pending: null,
      arguments_sha256: null,
      completed_at: Date.now(),
      duration_ms: null,
    };
    const publisher = await EventPublisher.connect(g.kafka, g.serde);
    try {
      // Unsigned, then signed by a key of a role that does not decide (the policy service's).
      await publisher.publish('approvalsDecided', run.tenant, forged);
      await publisher.publish(
        'approvalsDecided',
        run.tenant,
        { ...forged, decision_id: 'dec_forged_2' },
        signedHeaders({ ...forged, decision_id: 'dec_forged_2' }, { topic: 'approvalsDecided', by: 'policy' }),
      );
      await publisher.publish('results', run.run_id, forgedOk);
    } finally {
      await publisher.disconnect();
    }
    const checked = await recordTrace({
      kafka: g.kafka,
      serde: g.serde,
      topics: g.topics,
      runId: run.run_id,
      catalog: g.catalog,
      until: { maxMs: 30_000 },
      keys: TEST_KEY_RING,
    });
    expect(checked.calls[3]?.approval?.decision).toBe('pending');
    expect(checked.calls[3]?.result).toEqual(trace.calls[3]?.result);
    // The orders of the run, all signed by the policy service, are all still there.
    expect(checked.calls.map((c) => c.decision.status)).toEqual(trace.calls.map((c) => c.decision.status));
  });
});
