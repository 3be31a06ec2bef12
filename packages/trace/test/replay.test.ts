import { describe, expect, it } from 'vitest';
import { customerSupportCatalog } from '@gatehouse/example-customer-support';
import { buildTrace, formatReport, parseTrace, replayTrace, TraceError, traceJson } from '@gatehouse/trace';
import type { ReplayPolicyTable, ReplayReport, Trace } from '@gatehouse/trace';
import {
  catalogWithOptionalFieldV2,
  catalogWithReadTurnedWrite,
  catalogWithRequiredFieldInPlace,
  fixtureEvents,
  RUN,
  SECRETS,
} from './fixtures.js';

const reference = customerSupportCatalog();
const recorded = (): Trace =>
  buildTrace({ runId: RUN, catalog: reference, events: fixtureEvents(), recordedAt: new Date('2026-01-02T03:04:05Z') });

const call = (report: ReplayReport, id: string) => {
  const found = report.calls.find((c) => c.command_id === id);
  if (found === undefined) throw new Error(`no call ${id} in the report`);
  return found;
};
const invariant = (report: ReplayReport, name: string) => report.invariants.find((i) => i.name === name)?.holds;

describe('a recorded trace', () => {
  it('holds the run’s calls in order with their decisions, approvals and result shapes', () => {
    const trace = recorded();
    expect(trace.format).toBe('gatehouse-trace/1');
    expect(trace.run).toEqual({ run_id: RUN, tenant: 'acme' });
    expect(trace.recorded_at).toBe('2026-01-02T03:04:05.000Z');
    expect(trace.calls.map((c) => [c.command_id, c.decision])).toEqual([
      ['c1-read', { status: 'routed' }],
      ['c2-unknown-field', { status: 'refused', code: 'INVALID_ARGUMENT', field: '/nickname' }],
      ['c3-preview', { status: 'routed' }],
      ['c4-send', { status: 'pending_approval' }],
    ]);
    const [read, unknown, , send] = trace.calls;
    expect(read?.result).toEqual({ status: 'ok', fields: ['customer_id', 'email', 'name', 'version'] });
    expect(unknown?.result).toEqual({ status: 'error', code: 'INVALID_ARGUMENT' });
    expect(unknown?.arguments).toEqual({ customer_id: 'C-1842', nickname: 'x'.repeat(14) });
    expect(send?.approval).toEqual({ decision: 'approved', role: 'support-lead', rule: 'customer-email-support-lead', on_behalf_of: null });
    expect(send?.policy).toEqual({
      environment: 'sandbox',
      rule: 'customer-email-support-lead',
      scope: { affected_records: 1, amount: null, recipients: 1, irreversible: 1 },
    });
    expect(send?.result).toEqual({ status: 'ok', fields: ['message_id', 'recipient', 'sent_at'] });
    expect(read?.arguments_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(trace.catalog.tools.map((t) => t.address)).toContain('send_customer_email.v1');
  });

  it('contains no free-text argument and no result value', () => {
    const text = traceJson(recorded());
    for (const secret of SECRETS) expect(text).not.toContain(secret);
  });

  it('reads back from its JSON text, and a document that is not a trace is refused', () => {
    const trace = recorded();
    expect(parseTrace(traceJson(trace))).toEqual(trace);
    expect(() => parseTrace('{"format":"gatehouse-trace/1","calls":[{}]}')).toThrow(TraceError);
    expect(() => parseTrace('not json')).toThrow(/not JSON/);
  });
});

describe('replaying a trace', () => {
  it('shows no difference against the catalog it was recorded with', () => {
    const report = replayTrace(recorded(), reference);
    expect(report.catalogChanged).toBe(false);
    expect(report.differences).toBe(0);
    expect(report.calls.map((c) => c.after.status)).toEqual(['routed', 'refused', 'routed', 'pending_approval']);
    expect(call(report, 'c2-unknown-field').after).toEqual({ status: 'refused', code: 'INVALID_ARGUMENT', field: '/nickname' });
    expect(report.invariants.every((i) => i.holds)).toBe(true);
  });

  it('shows no effect difference when get_customer gains a v2 with an optional field', () => {
    const report = replayTrace(recorded(), catalogWithOptionalFieldV2());
    expect(report.catalogChanged).toBe(true);
    expect(report.differences).toBe(0);
    expect(report.calls.every((c) => !c.differs)).toBe(true);
    expect(report.invariants.filter((i) => !i.holds)).toEqual([]);
  });

  it('shows the break when a field is made required in place on the same version', () => {
    const report = replayTrace(recorded(), catalogWithRequiredFieldInPlace());
    expect(report.catalogChanged).toBe(true);
    const read = call(report, 'c1-read');
    expect(read.differs).toBe(true);
    expect(read.before).toEqual({ status: 'routed' });
    expect(read.after).toEqual({ status: 'refused', code: 'INVALID_ARGUMENT', field: '/include_orders' });
    expect(read.why).toContain('accepted when recorded, refused now');
    expect(call(report, 'c3-preview').differs).toBe(false);
    // Refused before and after with the same code: the reported field moved, no effect changed.
    expect(call(report, 'c2-unknown-field')).toMatchObject({
      differs: false,
      why: expect.stringContaining('now reported at /include_orders') as unknown,
    });
    expect(report.differences).toBe(1);
    expect(invariant(report, 'allowed-calls-stay-allowed')).toBe(false);
    expect(invariant(report, 'writes-have-approval-rules')).toBe(true);
    expect(formatReport(report)).toMatch(/≠\s+c1-read\s+get_customer\.v1\s+routed\s+refused INVALID_ARGUMENT \/include_orders/);
    expect(formatReport(report)).toMatch(/BROKEN\s+allowed-calls-stay-allowed/);
  });

  it('flags a read that became a write, even where the call is still accepted', () => {
    const report = replayTrace(recorded(), catalogWithReadTurnedWrite());
    expect(call(report, 'c1-read').why).toContain('effect read → write');
    expect(call(report, 'c1-read').differs).toBe(true);
    expect(invariant(report, 'reads-stay-reads')).toBe(false);
  });

  it('re-decides writes with a policy table when one is given', () => {
    const table = (kind: 'allow' | 'require_approval' | 'deny'): ReplayPolicyTable => ({
      evaluate: () => ({
        ruleId: 'test',
        decision: kind === 'require_approval' ? { kind, approverRole: 'support-lead' } : { kind },
      }),
    });
    expect(replayTrace(recorded(), reference, { policyTable: table('require_approval') }).differences).toBe(0);
    const denied = replayTrace(recorded(), reference, { policyTable: table('deny') });
    expect(denied.differences).toBe(1);
    expect(call(denied, 'c4-send').after).toEqual({ status: 'refused', code: 'POLICY_DENIED' });
    const allowed = replayTrace(recorded(), reference, { policyTable: table('allow') });
    expect(call(allowed, 'c4-send')).toMatchObject({
      after: { status: 'routed' },
      differs: true,
      why: expect.stringContaining('policy outcome') as unknown,
    });
  });

  it('reports a tool that no longer exists as refused with TOOL_NOT_FOUND', () => {
    const trace = recorded();
    const renamed = { ...trace, calls: trace.calls.map((c) => (c.command_id === 'c1-read' ? { ...c, tool: 'get_customer.v9' } : c)) };
    const report = replayTrace(renamed, reference);
    expect(call(report, 'c1-read').after).toEqual({ status: 'refused', code: 'TOOL_NOT_FOUND' });
    expect(call(report, 'c1-read').differs).toBe(true);
  });
});
