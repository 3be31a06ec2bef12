import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEED } from '@gatehouse/customers';
import type { CancelResult, ErrorBody, ExportJobView, SentMessage } from '@gatehouse/customers';
import { eventually, newKey, startTestService } from './customers-harness.js';
import type { TestService } from './customers-harness.js';

const C = SEED.customer;

async function jobState(svc: TestService, id: string): Promise<string | undefined> {
  const found = await svc.db.query<{ state: string }>(`SELECT state FROM ${svc.t.exportJobs} WHERE id = $1`, [id]);
  return found.rows[0]?.state;
}

async function startExport(svc: TestService, key = newKey('exp')): Promise<string> {
  const reply = await svc.call<{ job_id: string; state: string }>('POST', '/exports', { key, body: { customer_id: C.id, format: 'csv' } });
  expect(reply.status).toBe(202);
  expect(reply.body.state).toBe('queued');
  return reply.body.job_id;
}

function poll(svc: TestService, id: string, done: (job: ExportJobView) => boolean, what: string): Promise<ExportJobView> {
  return eventually(
    async () => {
      const job = (await svc.call<ExportJobView>('GET', `/exports/${id}`)).body;
      return done(job) ? job : undefined;
    },
    20_000,
    what,
  );
}

/** Cancels a job as the cancel tool does: a keyed write whose body is its arguments. */
const cancel = (svc: TestService, id: string, tenant?: string) =>
  svc.call<CancelResult>('POST', `/exports/${id}/cancel`, {
    key: newKey('cancel'),
    body: { operation_id: id },
    ...(tenant === undefined ? {} : { tenant }),
  });

describe('sending an email to a customer', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => svc.close());

  it('records the message once however often the same request is retried, sequentially or concurrently', async () => {
    const key = newKey('mail');
    const body = { customer_id: C.id, subject: 'Your address', body: 'We updated your shipping address.', template: 'address_changed' };
    const send = () => svc.call<SentMessage>('POST', `/customers/${C.id}/emails`, { key, body });
    const first = await send();
    const retries = [await send(), ...(await Promise.all([send(), send(), send()]))];
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ recipient: 'marta.kowalska@example.com' });
    expect(first.body.message_id).toMatch(/^msg_/);
    for (const retry of retries) {
      expect(retry.status).toBe(200);
      expect(retry.body).toEqual(first.body);
      expect(retry.headers.get('idempotent-replay')).toBe('true');
    }
    const rows = await svc.db.query<{ id: string; recipient: string; subject: string; template: string }>(
      `SELECT id, recipient, subject, template FROM ${svc.t.outboundMessages} WHERE idempotency_key = $1`,
      [key],
    );
    expect(rows.rows).toEqual([
      { id: first.body.message_id, recipient: 'marta.kowalska@example.com', subject: 'Your address', template: 'address_changed' },
    ]);
  });

  it('sends one message per key when concurrent requests carry fresh keys', async () => {
    const before = (await svc.db.query(`SELECT 1 FROM ${svc.t.outboundMessages}`)).rowCount ?? 0;
    const replies = await Promise.all(
      [1, 2, 3].map((n) =>
        svc.call('POST', `/customers/${C.id}/emails`, { key: newKey('mail'), body: { customer_id: C.id, subject: `n${n}`, body: 'b' } }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200]);
    expect((await svc.db.query(`SELECT 1 FROM ${svc.t.outboundMessages}`)).rowCount).toBe(before + 3);
  });

  it('answers 404 and sends nothing to a customer of another tenant', async () => {
    const reply = await svc.call<ErrorBody>('POST', `/customers/${SEED.otherTenantCustomer.id}/emails`, {
      key: newKey(),
      body: { customer_id: SEED.otherTenantCustomer.id, subject: 's', body: 'b' },
    });
    expect(reply.status).toBe(404);
    expect(reply.body.error.code).toBe('NOT_FOUND');
    const sent = await svc.db.query(`SELECT 1 FROM ${svc.t.outboundMessages} WHERE customer_id = $1`, [SEED.otherTenantCustomer.id]);
    expect(sent.rowCount).toBe(0);
  });
});

describe('export jobs that finish quickly', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ exportStepMs: 150 });
  });
  afterAll(async () => svc.close());

  it('runs a job from queued through running to succeeded with a result url', async () => {
    const id = await startExport(svc);
    const states = new Set<string>();
    const done = await poll(
      svc,
      id,
      (job) => {
        states.add(job.state);
        return job.state === 'succeeded';
      },
      'export to succeed',
    );
    expect(states.has('running')).toBe(true);
    expect(done).toMatchObject({ job_id: id, customer_id: C.id, format: 'csv', progress: 100, interruptible: false });
    expect(done.result_url).toMatch(new RegExp(`${id}\\.csv$`));
    expect(await jobState(svc, id)).toBe('succeeded');
  });

  it('starts one job per idempotency key', async () => {
    const key = newKey('exp');
    const first = await startExport(svc, key);
    const again = await svc.call<{ job_id: string }>('POST', '/exports', { key, body: { customer_id: C.id, format: 'csv' } });
    expect(again.status).toBe(202);
    expect(again.body.job_id).toBe(first);
    expect((await svc.db.query(`SELECT 1 FROM ${svc.t.exportJobs} WHERE idempotency_key = $1`, [key])).rowCount).toBe(1);
  });

  it('answers already_completed to a cancel after success and leaves the job succeeded', async () => {
    const id = await startExport(svc);
    await poll(svc, id, (job) => job.state === 'succeeded', 'export to succeed');
    const reply = await cancel(svc, id);
    expect(reply.body).toEqual({ job_id: id, outcome: 'already_completed', state: 'succeeded' });
    expect(await jobState(svc, id)).toBe('succeeded');
  });

  it("hides another tenant's job", async () => {
    const id = await startExport(svc);
    expect((await svc.call('GET', `/exports/${id}`, { tenant: 'globex' })).status).toBe(404);
    expect((await cancel(svc, id, 'globex')).status).toBe(404);
  });
});

describe('cancelling export jobs', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ exportStepMs: 1_500 });
  });
  afterAll(async () => svc.close());

  it('stops a queued job and says so', async () => {
    const id = await startExport(svc);
    const reply = await cancel(svc, id);
    expect(reply.body).toEqual({ job_id: id, outcome: 'stopped', state: 'cancelled' });
    expect(await jobState(svc, id)).toBe('cancelled');
    const again = await cancel(svc, id);
    expect(again.body).toEqual({ job_id: id, outcome: 'already_completed', state: 'cancelled' });
  });

  it('stops a running job while it is still interruptible, and the worker never resumes it', async () => {
    const id = await startExport(svc);
    await poll(svc, id, (job) => job.state === 'running', 'export to run');
    const reply = await cancel(svc, id);
    expect(reply.body).toEqual({ job_id: id, outcome: 'stopped', state: 'cancelled' });
    const other = await startExport(svc);
    await poll(svc, other, (job) => job.state === 'running', 'a later export to run');
    expect(await jobState(svc, id)).toBe('cancelled');
  });

  it('answers not_interruptible while a job is finalizing, and the job then completes', async () => {
    const id = await startExport(svc);
    const finalizing = await poll(svc, id, (job) => job.state === 'running' && !job.interruptible, 'export to finalize');
    expect(finalizing.progress).toBeGreaterThanOrEqual(80);
    const reply = await cancel(svc, id);
    expect(reply.body).toEqual({ job_id: id, outcome: 'not_interruptible', state: 'running' });
    await poll(svc, id, (job) => job.state === 'succeeded', 'export to succeed');
    expect(await jobState(svc, id)).toBe('succeeded');
  });
});
