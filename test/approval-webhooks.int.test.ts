import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookReceiver } from '@gatehouse/client';
import type { WebhookReceipt } from '@gatehouse/client';
import { approvalRequest, startApprovalHarness, TOKENS } from './support/approval.js';
import type { ApprovalHarness } from './support/approval.js';
import { decideAs } from './support/decide.js';
import { Keyspace, RunRegistry } from '@gatehouse/state';
import { pollUntil } from './support/poll.js';

const secret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly receipt: WebhookReceipt;
  readonly answered: number;
}

/** An approver tool's endpoint on loopback: checks every signature, and answers 503 while "down". */
async function startReceiver(
  key: string,
): Promise<{ url: string; received: Received[]; down: (n: number) => void; stop(): Promise<void>; server: Server }> {
  const receiver = new WebhookReceiver(key);
  const received: Received[] = [];
  let failuresLeft = 0;
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      if (failuresLeft > 0) {
        failuresLeft -= 1;
        received.push({
          headers: request.headers,
          body,
          receipt: { ok: false, code: 'WEBHOOK_SIGNATURE_INVALID', message: 'receiver down' },
          answered: 503,
        });
        response.writeHead(503).end();
        return;
      }
      const receipt = receiver.receive(request.headers, body);
      // A replay is answered 2xx: it was delivered before, and is not acted on again.
      const answered = receipt.ok || receipt.code === 'WEBHOOK_REPLAYED' ? 204 : 401;
      received.push({ headers: request.headers, body, receipt, answered });
      response.writeHead(answered).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}/hooks/gatehouse`,
    received,
    server,
    down: (n) => (failuresLeft = n),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('approvers are told where they work: signed webhooks, at least once', () => {
  const key = secret();
  const deadKey = secret();
  let h: ApprovalHarness;
  let hook: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    hook = await startReceiver(key);
    h = await startApprovalHarness('webhooks', {
      publicUrl: 'https://approvals.acme.example',
      webhooks: {
        endpoints: [
          {
            id: 'support-chat',
            url: hook.url,
            events: ['approval.requested', 'approval.approved', 'approval.rejected', 'approval.expired', 'approval.withdrawn'],
            tenants: null,
            secret: key,
          },
          // Nothing listens here: every delivery fails, and is dead-lettered after two tries.
          { id: 'gone', url: 'http://127.0.0.1:9/hooks', events: ['approval.requested'], tenants: ['globex'], secret: deadKey },
        ],
        attempts: 6,
        backoffMs: 50,
        timeoutMs: 2_000,
      },
    });
  });
  afterAll(async () => {
    await h?.stop();
    await hook?.stop();
  });

  const delivered = (id: string) =>
    pollUntil(() => Promise.resolve(hook.received.find((r) => r.receipt.ok && r.receipt.id === id)), 20_000, `webhook ${id}`);
  const metric = async (outcome: string): Promise<number> => {
    const text = await (await fetch(`${h.url()}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`gatehouse_webhook_deliveries_total{outcome="${outcome}"}`));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  };

  it('tells of a new request with the tool, role, expiry and a console link, signed, without the arguments', async () => {
    const request = approvalRequest({ on_behalf_of: { issuer: 'https://idp.example', subject: 'person-7', name: 'Otto Owner' } });
    await h.submit(request);
    const got = await delivered(`approval.requested:${request.proposal_id}`);
    expect(got.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(Number(got.headers['webhook-timestamp'])).toBeGreaterThan(Date.now() / 1000 - 60);
    if (!got.receipt.ok) throw new Error('refused');
    expect(got.receipt.type).toBe('approval.requested');
    expect(got.receipt.data).toMatchObject({
      proposal_id: request.proposal_id,
      tenant: 'acme',
      tool: 'commit_address_change.v2',
      approver_role: 'support-lead',
      expires_at: new Date(request.expires_at).toISOString(),
      on_behalf_of: { subject: 'person-7', name: 'Otto Owner' },
      console_url: `https://approvals.acme.example/#proposal=${request.proposal_id}`,
    });
    expect(got.body).not.toContain(request.arguments);
    expect(got.body).not.toContain('2 New Street');
    expect(JSON.parse(got.body)).toMatchObject({
      text: expect.stringContaining('Approval needed (support-lead): commit_address_change.v2 on customer C-1842') as unknown,
    });
  });

  it('retries through a receiver outage with the same id until it is delivered, then tells of the decision', async () => {
    const request = approvalRequest();
    const retriedBefore = await metric('retried');
    hook.down(3);
    await h.submit(request);
    const id = `approval.requested:${request.proposal_id}`;
    await delivered(id);
    const tries = hook.received.filter((r) => r.headers['webhook-id'] === id);
    expect(tries.map((r) => r.answered)).toEqual([503, 503, 503, 204]);
    expect(await metric('retried')).toBeGreaterThanOrEqual(retriedBefore + 3);
    const { rows } = await h.db.query<{ state: string; attempts: number }>(
      `SELECT state, attempts FROM ${h.t.webhooks} WHERE delivery_id = $1`,
      [id],
    );
    expect(rows).toEqual([{ state: 'delivered', attempts: 4 }]);

    expect((await decideAs(h.url(), request.proposal_id, 'approve', TOKENS.lead)).status).toBe(200);
    const decision = await delivered(`approval.approved:${request.proposal_id}`);
    expect(decision.receipt.ok && decision.receipt.data).toMatchObject({ state: 'approved', decided_by: 'lead@acme.example' });
  });

  it('lets the receiver refuse a replayed notification and a forged one', async () => {
    const request = approvalRequest();
    await h.submit(request);
    const original = await delivered(`approval.requested:${request.proposal_id}`);
    const headers = Object.fromEntries(
      ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((n) => [n, String(original.headers[n])]),
    );
    const replay = await fetch(hook.url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: original.body,
    });
    const forged = await fetch(hook.url, {
      method: 'POST',
      headers: { ...headers, 'webhook-id': 'approval.approved:forged', 'content-type': 'application/json' },
      body: original.body.replace('approval.requested', 'approval.approved'),
    });
    expect([replay.status, forged.status]).toEqual([204, 401]);
    expect(hook.received.slice(-2).map((r) => (r.receipt.ok ? 'ok' : r.receipt.code))).toEqual([
      'WEBHOOK_REPLAYED',
      'WEBHOOK_SIGNATURE_INVALID',
    ]);
  });

  it('tells of a withdrawal when the run is stopped before anyone decided', async () => {
    const request = approvalRequest();
    const runs = new RunRegistry(h.redis, new Keyspace(h.redisPrefix));
    const now = Date.now();
    await runs.create({
      run_id: request.run_id,
      tenant: 'acme',
      principal: request.principal,
      role: 'support-agent',
      capabilities: [],
      environment: 'production',
      created_at: now,
      expires_at: now + 600_000,
      stopped_at: null,
    });
    await h.submit(request);
    await delivered(`approval.requested:${request.proposal_id}`);
    await runs.stop(request.run_id);
    const withdrawn = await delivered(`approval.withdrawn:${request.proposal_id}`);
    expect(withdrawn.receipt.ok && withdrawn.receipt.data).toMatchObject({ state: 'rejected', decided_by: 'gatehouse' });
    expect(JSON.parse(withdrawn.body)).toMatchObject({ type: 'approval.withdrawn' });
  });

  it('tells of an expiry, and dead-letters a delivery whose receiver never answers', async () => {
    const deadBefore = await metric('dead');
    const lapsing = approvalRequest({ tenant: 'globex', expires_at: Date.now() + 1_500 });
    await h.submit(lapsing);
    await delivered(`approval.expired:${lapsing.proposal_id}`);
    const gone = await pollUntil(
      async () => {
        const { rows } = await h.db.query<{ state: string; attempts: number; last_error: string }>(
          `SELECT state, attempts, last_error FROM ${h.t.webhooks} WHERE endpoint_id = 'gone' AND delivery_id = $1 AND state = 'dead'`,
          [`approval.requested:${lapsing.proposal_id}`],
        );
        return rows[0];
      },
      30_000,
      'the dead-lettered delivery',
    );
    expect(gone).toMatchObject({ state: 'dead', attempts: 6 });
    expect(await metric('dead')).toBe(deadBefore + 1);
  });
});
