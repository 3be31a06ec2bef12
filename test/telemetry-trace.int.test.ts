import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PendingNotice } from '@gatehouse/client';
import { DeadLetters, EventPublisher, startEventConsumer } from '@gatehouse/events';
import type { EventByRole, TopicRole } from '@gatehouse/events';
import type { Run } from '@gatehouse/state';
import { traceIdOf } from '@gatehouse/telemetry';
import type { RecordHeaders } from '@gatehouse/telemetry';
import { TOKENS } from './support/approval.js';
import { decideAs } from './support/decide.js';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';
import { eventually, logger } from './support/stack.js';
import { preview } from './support/writes.js';

interface Seen<R extends TopicRole> {
  readonly event: EventByRole[R];
  readonly headers: RecordHeaders | undefined;
}

/** Every event published on one topic of the Gatehouse from now on, with its Kafka headers. */
async function collectWithHeaders<R extends TopicRole>(g: Gatehouse, role: R): Promise<{ seen: Seen<R>[]; stop(): Promise<void> }> {
  const seen: Seen<R>[] = [];
  const publisher = await EventPublisher.connect(g.kafka, g.serde);
  const running = await startEventConsumer({
    kafka: g.kafka,
    serde: g.serde,
    role,
    groupId: `${g.label}-trace-${role}-${randomUUID()}`,
    fromBeginning: true,
    deadLetters: new DeadLetters(publisher),
    logger,
    handle: (event, record) => {
      seen.push({ event, headers: record.headers });
      return Promise.resolve();
    },
  });
  await running.joined;
  return {
    seen,
    stop: async () => {
      await running.stop();
      await publisher.disconnect();
    },
  };
}

const newTrace = (): { traceparent: string; traceId: string } => {
  const traceId = randomUUID().replace(/-/g, '');
  return { traceparent: `00-${traceId}-${randomUUID().replace(/-/g, '').slice(0, 16)}-01`, traceId };
};

describe('W3C trace context travels in Kafka headers from the call to its result', () => {
  let g: Gatehouse;
  let run: Run;
  let results: Awaited<ReturnType<typeof collectWithHeaders<'results'>>>;
  let orders: Awaited<ReturnType<typeof collectWithHeaders<'execute'>>>;
  let decided: Awaited<ReturnType<typeof collectWithHeaders<'approvalsDecided'>>>;

  beforeAll(async () => {
    g = await startGatehouse('teltrace', { approval: true });
    run = await g.createRun('support-agent');
    results = await collectWithHeaders(g, 'results');
    orders = await collectWithHeaders(g, 'execute');
    decided = await collectWithHeaders(g, 'approvalsDecided');
  });
  afterAll(async () => {
    await Promise.all([results.stop(), orders.stop(), decided.stop()]);
    await g.stop();
  });

  const resultOf = (commandId: string, status: string) =>
    eventually(
      () => results.seen.find((s) => s.event.command_id === commandId && s.event.status === status),
      20_000,
      `the ${status} result of ${commandId}`,
    );

  it('gives a read’s result the trace id the caller sent', async () => {
    const { traceparent, traceId } = newTrace();
    const commandId = `cmd-${randomUUID()}`;
    const result = await g.client.call(
      'get_customer.v1',
      { customer_id: 'C-1842' },
      { runId: run.run_id, tenant: run.tenant, traceparent, commandId },
    );
    expect(result.ok).toBe(true);
    const seen = await resultOf(commandId, 'ok');
    expect(traceIdOf(seen.headers)).toBe(traceId);
    const order = await eventually(() => orders.seen.find((s) => s.event.command_id === commandId), 20_000, 'the order');
    expect(traceIdOf(order.headers)).toBe(traceId);
  });

  it('gives a refusal at the policy service the caller’s trace id', async () => {
    const { traceparent, traceId } = newTrace();
    const commandId = `cmd-${randomUUID()}`;
    const result = await g.client.call(
      'get_customer.v1',
      { customer_id: 'nobody' },
      { runId: run.run_id, tenant: run.tenant, traceparent, commandId },
    );
    expect(!result.ok && result.error.code).toBe('INVALID_ARGUMENT');
    expect(traceIdOf((await resultOf(commandId, 'error')).headers)).toBe(traceId);
  });

  it('starts a trace for a call made without one', async () => {
    const commandId = `cmd-${randomUUID()}`;
    const result = await g.client.call('get_customer.v1', { customer_id: 'C-1842' }, { runId: run.run_id, tenant: run.tenant, commandId });
    expect(result.ok).toBe(true);
    expect(traceIdOf((await resultOf(commandId, 'ok')).headers)).toMatch(/^[0-9a-f]{32}$/);
  });

  it('carries the commit’s trace id through the person’s approval to the decision, the order and the write’s result', async () => {
    const proposalId = await preview(g, run, '2 Traced Terrace');
    const { traceparent, traceId } = newTrace();
    const commandId = `cmd-${randomUUID()}`;
    let notice: PendingNotice | undefined;
    const settled = g.client.call(
      'commit_address_change.v2',
      { proposal_id: proposalId },
      {
        runId: run.run_id,
        tenant: run.tenant,
        timeoutMs: 60_000,
        traceparent,
        commandId,
        onPending: (p) => (notice = p),
      },
    );
    await eventually(() => notice, 20_000, 'pending_approval');
    expect(traceIdOf((await resultOf(commandId, 'pending_approval')).headers)).toBe(traceId);
    expect((await decideAs(g.approval?.url ?? '', proposalId, 'approve', TOKENS.lead, { waitForRequest: true })).status).toBe(200);
    expect((await settled).ok).toBe(true);

    const decision = await eventually(() => decided.seen.find((s) => s.event.proposal_id === proposalId), 20_000, 'the decision');
    expect(traceIdOf(decision.headers)).toBe(traceId);
    const order = await eventually(() => orders.seen.find((s) => s.event.command_id === commandId), 20_000, 'the approved order');
    expect(order.event.approval).not.toBeNull();
    expect(traceIdOf(order.headers)).toBe(traceId);
    expect(traceIdOf((await resultOf(commandId, 'ok')).headers)).toBe(traceId);
  });

  it('carries the trace id onto the refusal a rejection sends the waiting agent', async () => {
    const proposalId = await preview(g, run, '3 Rejected Row', 'C-1004');
    const { traceparent, traceId } = newTrace();
    const commandId = `cmd-${randomUUID()}`;
    let notice: PendingNotice | undefined;
    const settled = g.client.call(
      'commit_address_change.v2',
      { proposal_id: proposalId },
      {
        runId: run.run_id,
        tenant: run.tenant,
        timeoutMs: 60_000,
        traceparent,
        commandId,
        onPending: (p) => (notice = p),
      },
    );
    await eventually(() => notice, 20_000, 'pending_approval');
    const rejected = await decideAs(g.approval?.url ?? '', proposalId, 'reject', TOKENS.lead, {
      waitForRequest: true,
      reason: 'not today',
    });
    expect(rejected.status).toBe(200);
    const result = await settled;
    expect(!result.ok && result.error.code).toBe('APPROVAL_REJECTED');
    expect(traceIdOf((await resultOf(commandId, 'error')).headers)).toBe(traceId);
  });
});
