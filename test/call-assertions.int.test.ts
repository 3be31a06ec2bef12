// Every handler call carries a call assertion the executor minted for it, which the system of record
// verifies against the keys the executor publishes on its ops port: end to end, through the real
// policy service and executor, with the customers service reading the JWKS over HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalSha256 } from '@gatehouse/identity';
import { referenceCatalog, referenceImplementations } from '@gatehouse/reference-tools';
import type { Run } from '@gatehouse/state';
import { startTestService } from './customers-harness.js';
import type { TestService } from './customers-harness.js';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';

describe('call assertions, from the executor to the system of record', () => {
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
    process.env['CUSTOMERS_URL'] = direct.url;
  });
  afterAll(async () => {
    process.env['CUSTOMERS_URL'] = g.customers.url;
    await direct?.close();
    await g?.stop();
  });

  it('publishes the executors’ public key on the ops port as a JWKS, with no private part', async () => {
    const response = await fetch(jwksUrl);
    expect(response.status).toBe(200);
    const jwks = (await response.json()) as { keys: Record<string, unknown>[] };
    expect(jwks.keys).toEqual([{ kty: 'OKP', crv: 'Ed25519', x: expect.any(String) as string, kid: 'test-assertion', alg: 'EdDSA', use: 'sig' }]);
  });

  it('reads and writes through Gatehouse, each request proved by an assertion naming its run, tool, key and approval', async () => {
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
    const keyRows = await direct.db.query<{ key: string; arguments_sha256: string }>(`select key, arguments_sha256 from ${direct.t.idempotencyKeys}`);
    // The key the service stored is the one the assertion named, and the body it hashed is the one approved.
    expect(keyRows.rows).toEqual([{ key: writing?.idempotencyKey, arguments_sha256: canonicalSha256({ customer_id: 'C-1842', format: 'csv' }) }]);
    expect(new Set(direct.served.map((s) => s.jti)).size).toBe(direct.served.length);
  });

  it('answers a handler whose tool declares no audience CREDENTIAL_REFUSED, with nothing sent', async () => {
    const served = direct.served.length;
    const unnamed = await startGatehouse('assert-none', {
      catalog: referenceCatalog(),
      // The same tools with no audience of their own, and none from a pack.
      implementations: referenceImplementations.map((implementation) => {
        const { credential, ...rest } = implementation;
        expect(credential?.audience).toBe('customers');
        return rest;
      }),
    });
    try {
      process.env['CUSTOMERS_URL'] = direct.url;
      const agent = await unnamed.createRun('support-agent');
      const answer = await unnamed.client.call('get_customer.v1', { customer_id: 'C-1842' }, { runId: agent.run_id, tenant: 'acme' });
      expect(answer.ok).toBe(false);
      if (answer.ok) return;
      expect(answer.error).toMatchObject({ code: 'CREDENTIAL_REFUSED', retryable: false });
      expect(direct.served.length).toBe(served);
    } finally {
      await unnamed.stop();
      process.env['CUSTOMERS_URL'] = direct.url;
    }
  });
});
