// A write the policy table allows runs once, under a key made outside the model; and every handler
// call carries a call assertion the executor minted for it, which the system of record verifies
// against the keys the executor publishes on its ops port: end to end, through the real policy
// service and executor, with a customers service reading the JWKS over HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalSha256 } from '@gatehouse/identity';
import type { Run } from '@gatehouse/state';
import { startTestService } from './customers-harness.js';
import type { TestService } from './customers-harness.js';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';

// The allow rule's write (no person) shares this Gatehouse: it runs first, against its own customers service.
describe('a write the policy table allows, and call assertions from the executor to the system of record', () => {
  let g: Gatehouse;
  let run: Run;
  let direct: TestService;
  let jwksUrl: string;

  beforeAll(async () => {
    g = await startGatehouse('assert', { exportStepMs: 200 });
    run = await g.createRun('ops-admin', { principal: 'agent:ops-bot' });
    jwksUrl = `${g.executors[0]?.url ?? ''}/.well-known/jwks.json`;
    // A customers service of its own that knows the executors only by the key set they serve.
    direct = await startTestService({ assertionKeys: jwksUrl });
  });
  afterAll(async () => {
    process.env['CUSTOMERS_URL'] = g.customers.url;
    await direct?.close();
    await g?.stop();
  });

  it('starts an export job through the allow rule, polls it to success, and cancels truthfully', async () => {
    const started = await g.client.call(
      'start_customer_export.v1',
      { customer_id: 'C-1842', format: 'csv' },
      { runId: run.run_id, tenant: 'acme' },
    );
    if (!started.ok) throw new Error(`export refused: ${started.error.code} ${started.error.message}`);
    const operation = started.result as { operation_id: string; state: string };
    expect(operation.state).toBe('queued');
    const { rows } = await g.customers.db.query<{ n: string }>(`select count(*) as n from ${g.customers.t.exportJobs}`);
    expect(Number(rows[0]?.n)).toBe(1);

    // Polling is the protocol of a long operation (get_operation); bounded by time, not by count.
    let state = 'queued';
    for (const deadline = Date.now() + 20_000; state !== 'succeeded' && Date.now() < deadline;) {
      const polled = await g.client.call(
        'get_operation.v1',
        { operation_id: operation.operation_id },
        { runId: run.run_id, tenant: 'acme' },
      );
      if (!polled.ok) throw new Error(polled.error.code);
      state = (polled.result as { state: string }).state;
      if (state !== 'succeeded') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(state).toBe('succeeded');
    const cancel = await g.client.call(
      'cancel_operation.v1',
      { operation_id: operation.operation_id },
      { runId: run.run_id, tenant: 'acme' },
    );
    expect(cancel.ok && cancel.result).toEqual({ operation_id: operation.operation_id, outcome: 'already_completed', state: 'succeeded' });
  });

  it('publishes the executors’ public key on the ops port as a JWKS, with no private part', async () => {
    const response = await fetch(jwksUrl);
    expect(response.status).toBe(200);
    const jwks = (await response.json()) as { keys: Record<string, unknown>[] };
    expect(jwks.keys).toEqual([
      { kty: 'OKP', crv: 'Ed25519', x: expect.any(String) as string, kid: 'test-assertion', alg: 'EdDSA', use: 'sig' },
    ]);
  });

  it('reads and writes through Gatehouse, each request proved by an assertion naming its run, tool, key and approval', async () => {
    process.env['CUSTOMERS_URL'] = direct.url;
    const opts = { runId: run.run_id, tenant: 'acme' };
    const read = await g.client.call('get_customer.v1', { customer_id: 'C-1842' }, opts);
    expect(read.ok).toBe(true);
    const started = await g.client.call('start_customer_export.v1', { customer_id: 'C-1842', format: 'csv' }, opts);
    if (!started.ok) throw new Error(`export refused: ${started.error.code} ${started.error.message}`);
    expect((await direct.db.query(`select count(*)::int as n from ${direct.t.exportJobs}`)).rows).toEqual([{ n: 1 }]);

    expect(direct.refused).toEqual([]);
    const [reading, writing] = direct.served;
    expect(reading).toMatchObject({ call: 'read', tool: 'get_customer.v1', sub: 'agent:ops-bot', tenant: 'acme', status: 200 });
    expect(reading?.actor).toMatch(/^assert-.*exec-0$/);
    expect(writing).toMatchObject({ call: 'write', tool: 'start_customer_export.v1', sub: 'agent:ops-bot', tenant: 'acme', status: 202 });
    const keyRows = await direct.db.query<{ key: string; arguments_sha256: string }>(
      `select key, arguments_sha256 from ${direct.t.idempotencyKeys}`,
    );
    // The key the service stored is the one the assertion named, and the body it hashed is the one approved.
    expect(keyRows.rows).toEqual([
      { key: writing?.idempotencyKey, arguments_sha256: canonicalSha256({ customer_id: 'C-1842', format: 'csv' }) },
    ]);
    expect(new Set(direct.served.map((s) => s.jti)).size).toBe(direct.served.length);
  });
});
