import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalArguments } from '@gatehouse/contracts';
import { EventPublisher } from '@gatehouse/events';
import type { ExecutionOrder } from '@gatehouse/events';
import type { PendingNotice } from '@gatehouse/client';
import type { Run } from '@gatehouse/state';
import { TOKENS } from './support/approval.js';
import { decideAs } from './support/decide.js';
import { CONTROL_TOKEN, startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';
import { pollUntil } from './support/poll.js';
import { eventually } from './support/stack.js';
import { approvedOrder, collect, currentVersion, preview } from './support/writes.js';
import { signedHeaders } from './support/signing.js';

// Stopping a run is the kill switch: after `POST /runs/:id/stop` says "stopped", nothing of that run
// that has not started runs — not a write a person has yet to approve, not an order already queued.
describe('stopping a run stops what it has not started', () => {
  let g: Gatehouse;
  let results: Awaited<ReturnType<typeof collect<'results'>>>;

  beforeAll(async () => {
    g = await startGatehouse('runstop', { approval: true });
    results = await collect(g, 'results');
  });
  afterAll(async () => {
    await results?.stop();
    await g?.stop();
  });

  const stop = async (run: Run): Promise<void> => {
    const stopped = await fetch(`${g.policies[0]?.url ?? ''}/runs/${run.run_id}/stop`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
    });
    expect(((await stopped.json()) as { outcome: string }).outcome).toBe('stopped');
  };

  async function send(order: ExecutionOrder): Promise<void> {
    const publisher = await EventPublisher.connect(g.kafka, g.serde);
    try {
      await publisher.publish('execute', order.tenant, order, signedHeaders(order));
    } finally {
      await publisher.disconnect();
    }
  }

  it('withdraws a pending approval request: the agent is told, and nobody can approve it any more', async () => {
    const run = await g.createRun('support-agent', { principal: 'agent:stopped-bot' });
    const before = await currentVersion(g);
    const proposalId = await preview(g, run, '1 Withdrawn Way');
    let pending: PendingNotice | undefined;
    const committing = g.client.call(
      'commit_address_change.v2',
      { proposal_id: proposalId },
      { runId: run.run_id, tenant: run.tenant, timeoutMs: 60_000, onPending: (p) => (pending = p) },
    );
    await eventually(() => pending, 20_000, 'pending_approval');
    const api = `${g.approval?.url ?? ''}/api/approvals/${proposalId}`;
    await pollUntil(
      async () => ((await fetch(api, { headers: { authorization: `Bearer ${TOKENS.lead}` } })).status === 200 ? true : undefined),
      20_000,
      'the pending request',
      25,
    );
    await stop(run);
    const answer = await committing;
    expect(answer.ok).toBe(false);
    if (answer.ok) return;
    expect(answer.error.code).toBe('APPROVAL_REJECTED');
    expect(answer.error.message).toMatch(/withdrawn: the run was stopped/);
    const shown = (await (await fetch(api, { headers: { authorization: `Bearer ${TOKENS.lead}` } })).json()) as {
      state: string;
      reason: string | null;
    };
    expect(shown).toMatchObject({ state: 'rejected', reason: expect.stringMatching(/^withdrawn/) as string });
    const approve = await decideAs(g.approval?.url ?? '', proposalId, 'approve', TOKENS.lead);
    expect(approve.status).toBe(409);
    expect(approve.body).toMatchObject({ error: { code: 'NOT_PENDING' } });
    expect(await currentVersion(g)).toBe(before);
  });

  it('refuses a queued order of a stopped run, a write or a read, with RUN_NOT_FOUND, and runs nothing', async () => {
    const run = await g.createRun('support-agent', { principal: 'agent:stopped-bot-2' });
    const before = await currentVersion(g);
    const write = await approvedOrder(
      g,
      run,
      {
        customer_id: 'C-1842',
        expected_version: before,
        destination: { kind: 'new', line1: '2 Stopped Street', city: 'York', country: 'GB' },
      },
      before,
    );
    const { canonical, sha256 } = canonicalArguments({ customer_id: 'C-1842' });
    const read: ExecutionOrder = {
      ...write,
      order_id: randomUUID(),
      command_id: `cmd-${randomUUID()}`,
      tool: 'get_customer.v1',
      effect: 'read',
      arguments: canonical,
      arguments_sha256: sha256,
      proposal_id: null,
      approval: null,
      idempotency_key: null,
    };
    await stop(run);
    await send(write);
    await send(read);
    for (const order of [write, read]) {
      const answer = await eventually(
        () => results.events.find((r) => r.command_id === order.command_id),
        20_000,
        `the answer to the ${order.effect}`,
      );
      expect(answer.error).toMatchObject({ code: 'RUN_NOT_FOUND', retryable: false });
    }
    expect(await currentVersion(g)).toBe(before);
  });
});
