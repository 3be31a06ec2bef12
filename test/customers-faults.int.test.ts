import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MALFORMED_BODY, SEED } from '@gatehouse/customers';
import type { ErrorBody, FaultStats } from '@gatehouse/customers';
import { eventually, newKey, startTestService } from './customers-harness.js';
import type { TestService } from './customers-harness.js';

const C = SEED.customer;
const body = { customer_id: C.id, expected_version: 17, destination: { kind: 'saved', address_id: 'addr_1842_office' } };

async function version(svc: TestService): Promise<number | undefined> {
  const found = await svc.db.query<{ version: number }>(`SELECT version FROM ${svc.t.customers} WHERE id = $1`, [C.id]);
  return found.rows[0]?.version;
}

describe('fault hooks (CUSTOMERS_FAULTS=1)', () => {
  let svc: TestService;
  beforeEach(async () => {
    svc = await startTestService({ faults: true });
    return () => svc.close();
  });

  it('commits, then drops the connection without an answer on drop-after-commit; the status query knows', async () => {
    const key = newKey('drop');
    const call = svc.call('POST', `/customers/${C.id}/address-changes`, { key, body, fault: 'drop-after-commit' });
    await expect(call).rejects.toThrow(/fetch failed/);
    expect(await version(svc)).toBe(18);
    const city = await svc.db.query<{ city: string }>(`SELECT city FROM ${svc.t.customers} WHERE id = $1`, [C.id]);
    expect(city.rows[0]?.city).toBe('Oslo');
    const status = await svc.call<{ status: string; response: { new_version: number } }>('GET', `/operations/${key}`);
    expect(status.body).toMatchObject({ status: 'succeeded', response: { new_version: 18 } });
    const retry = await svc.call('POST', `/customers/${C.id}/address-changes`, { key, body });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replay')).toBe('true');
    expect(await version(svc)).toBe(18);
  });

  it('commits, then answers 200 with a body that is not the documented shape on malformed-success', async () => {
    const key = newKey('bad');
    const reply = await svc.call('POST', `/customers/${C.id}/address-changes`, { key, body, fault: 'malformed-success' });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe(MALFORMED_BODY);
    expect(() => JSON.parse(reply.text) as unknown).toThrow();
    expect(await version(svc)).toBe(18);
    expect((await svc.call<{ status: string }>('GET', `/operations/${key}`)).body.status).toBe('succeeded');
  });

  it('answers the status query with 503 while x-fault: status-down is sent or the toggle is on', async () => {
    const key = newKey();
    await svc.call('POST', `/customers/${C.id}/address-changes`, { key, body });
    const down = await svc.call<ErrorBody>('GET', `/operations/${key}`, { fault: 'status-down' });
    expect(down.status).toBe(503);
    expect(down.body.error).toMatchObject({ code: 'UNAVAILABLE', retryable: true });
    expect((await svc.call('GET', `/operations/${key}`)).status).toBe(200);
    expect((await svc.call('POST', '/__faults', { tenant: null, body: { statusDown: true } })).status).toBe(200);
    expect((await svc.call('GET', `/operations/${key}`)).status).toBe(503);
    await svc.call('POST', '/__faults', { tenant: null, body: { statusDown: false } });
    expect((await svc.call('GET', `/operations/${key}`)).status).toBe(200);
  });

  it('delays handling on delay:<ms>, so a client timeout leaves an outcome the status query later reports', async () => {
    const key = newKey('slow');
    const call = svc.call('POST', `/customers/${C.id}/address-changes`, {
      key,
      body,
      fault: 'delay:400',
      signal: AbortSignal.timeout(100),
    });
    await expect(call).rejects.toThrow(/aborted|timeout/i);
    expect((await svc.call('GET', `/operations/${key}`)).status).toBe(404);
    const status = await eventually(
      async () => {
        const reply = await svc.call<{ status: string }>('GET', `/operations/${key}`);
        return reply.status === 200 ? reply.body : undefined;
      },
      10_000,
      'the delayed write to commit',
    );
    expect(status.status).toBe('succeeded');
    expect(await version(svc)).toBe(18);
  });

  it('records the maximum number of concurrent in-flight writes per tenant', async () => {
    await svc.call('POST', '/__stats/reset', { tenant: null });
    const mail = (tenant: string, customer: string) =>
      svc.call('POST', `/customers/${customer}/emails`, {
        tenant,
        key: newKey('m'),
        body: { customer_id: customer, subject: 's', body: 'b' },
        fault: 'delay:500',
      });
    const replies = await Promise.all([
      ...Array.from({ length: 5 }, () => mail('acme', C.id)),
      ...Array.from({ length: 2 }, () => mail('globex', SEED.otherTenantCustomer.id)),
    ]);
    expect(replies.map((r) => r.status)).toEqual(Array(7).fill(200));
    const stats = await eventually(
      async () => {
        const got = (await svc.call<FaultStats>('GET', '/__stats', { tenant: null })).body;
        return Object.keys(got.inFlightByTenant).length === 0 ? got : undefined;
      },
      5_000,
      'in-flight writes to drain',
    );
    expect(stats.maxInFlightByTenant).toEqual({ acme: 5, globex: 2 });
    const reset = await svc.call<FaultStats>('POST', '/__stats/reset', { tenant: null });
    expect(reset.body).toEqual({ maxInFlightByTenant: {}, inFlightByTenant: {} });
  });

  it('refuses an unknown x-fault value', async () => {
    const reply = await svc.call<ErrorBody>('POST', `/customers/${C.id}/address-changes`, { key: newKey(), body, fault: 'explode' });
    expect(reply.status).toBe(400);
    expect(reply.body.error.field).toBe('x-fault');
    expect(await version(svc)).toBe(17);
  });
});

describe('without CUSTOMERS_FAULTS', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => svc.close());

  it('ignores x-fault and has no __ routes', async () => {
    const reply = await svc.call('POST', `/customers/${C.id}/address-changes`, { key: newKey(), body, fault: 'drop-after-commit' });
    expect(reply.status).toBe(200);
    expect((await svc.call('GET', `/operations/${newKey()}`, { fault: 'status-down' })).status).toBe(404);
    expect((await svc.call('GET', '/__stats', { tenant: null })).status).not.toBe(200);
    expect((await svc.call('POST', '/__faults', { tenant: null, body: { statusDown: true } })).status).not.toBe(200);
  });
});
