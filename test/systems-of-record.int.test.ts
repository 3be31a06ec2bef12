// Nothing reaches a system of record around Gatehouse: direct HTTP calls to the customers and the
// refunds service, each refused by its call assertion (or the lack of one) with nothing changed in
// PostgreSQL — and the same write, with the assertion an executor mints for it, applied once.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEED as REFUNDS_SEED, refundsConfigFromEnv, startRefundsService } from '@gatehouse/example-refunds-service';
import type { RunningRefundsService } from '@gatehouse/example-refunds-service';
import { SEED } from '@gatehouse/customers';
import { CallAssertionSigner } from '@gatehouse/identity';
import type { CallFacts } from '@gatehouse/identity';
import { newKey, startTestService } from './customers-harness.js';
import type { TestService } from './customers-harness.js';
import { DATABASE_URL } from './support/approval.js';
import { TEST_ASSERTION_ISSUER, testAssertion, testJwksFile } from './support/signing.js';
import { logger } from './support/stack.js';

interface Attempt {
  readonly case: string;
  /** The assertion sent (`Bearer …` is added), or none. */
  readonly assertion: () => Promise<string | undefined>;
  /** The body sent, when it is not the one the assertion was minted for. */
  readonly body?: unknown;
  readonly status: number;
  readonly code: string;
}

const stranger = generateKeyPairSync('ed25519').privateKey;

/** The refusals every write route gives, for a write to `target` whose body, key and tenant the caller names. */
function refusals(
  audience: string,
  target: string,
  key: string,
  body: Record<string, unknown>,
  changed: Record<string, unknown>,
): Attempt[] {
  const write = (facts: Partial<CallFacts> & { body?: unknown } = {}) =>
    testAssertion(audience, { call: 'write', method: 'POST', target, idempotencyKey: key, body, ...facts });
  return [
    { case: 'no assertion', assertion: () => Promise.resolve(undefined), status: 401, code: 'ASSERTION_MISSING' },
    { case: 'an expired one', assertion: () => write({ expiresAt: Date.now() - 60_000 }), status: 401, code: 'ASSERTION_EXPIRED' },
    {
      case: 'one signed by a key the executors do not publish',
      assertion: async () =>
        (await CallAssertionSigner.create(TEST_ASSERTION_ISSUER, { keyId: 'test-assertion', privateKey: stranger })).mint({
          audience,
          call: 'write',
          method: 'POST',
          target,
          principal: 'agent:x',
          actor: 'forger',
          tenant: 'acme',
          runId: 'r',
          commandId: 'c',
          tool: 't',
          onBehalfOf: null,
          argumentsSha256: null,
          idempotencyKey: key,
          proposalId: null,
          approvalId: 'a',
          approver: null,
          expiresAt: Date.now() + 30_000,
        }),
      status: 401,
      code: 'ASSERTION_INVALID',
    },
    {
      case: 'one for another system of record',
      assertion: () => testAssertion(`not-${audience}`, { call: 'write', method: 'POST', target, idempotencyKey: key, body }),
      status: 401,
      code: 'ASSERTION_INVALID',
    },
    { case: "another tenant's", assertion: () => write({ tenant: 'globex' }), status: 403, code: 'TENANT_MISMATCH' },
    {
      case: "a read's, on the write route",
      assertion: () => testAssertion(audience, { call: 'read', method: 'POST', target }),
      status: 403,
      code: 'WRONG_CALL',
    },
    { case: 'one for another method', assertion: () => write({ method: 'PUT' }), status: 403, code: 'METHOD_MISMATCH' },
    { case: 'one for another path', assertion: () => write({ target: `${target}/x` }), status: 403, code: 'TARGET_MISMATCH' },
    { case: 'a write whose body does not match its hash', assertion: () => write(), body: changed, status: 403, code: 'BODY_MISMATCH' },
    {
      case: 'a write under another idempotency key',
      assertion: () => write({ idempotencyKey: `${key}-other` }),
      status: 403,
      code: 'IDEMPOTENCY_KEY_MISMATCH',
    },
    { case: 'a write with no approval', assertion: () => write({ approvalId: null }), status: 403, code: 'APPROVAL_MISSING' },
  ];
}

async function send(
  url: string,
  key: string,
  body: unknown,
  assertion: string | undefined,
): Promise<{ status: number; code: unknown; challenge: string | null }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      ...(assertion === undefined ? {} : { authorization: `Bearer ${assertion}` }),
      'x-tenant': 'acme',
      'idempotency-key': key,
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as { error?: { code?: unknown } };
  return { status: response.status, code: answer.error?.code, challenge: response.headers.get('www-authenticate') };
}

/** The count of refusals by code on a service's /metrics. */
async function refusalCount(metricsUrl: string, code: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  const line = text.split('\n').find((l) => l.startsWith(`gatehouse_call_refusals_total{code="${code}"}`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

describe('the customers service, called directly', () => {
  let svc: TestService;
  const C = SEED.customer;
  const destination = { kind: 'new', line1: 'Piotrkowska 100', city: 'Łódź', country: 'PL', postal_code: '90-001' };

  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => svc.close());

  const state = async () => ({
    customer: (await svc.db.query(`SELECT version, line1, city FROM ${svc.t.customers} WHERE id = $1`, [C.id])).rows,
    keys: (await svc.db.query(`SELECT key, status FROM ${svc.t.idempotencyKeys}`)).rows,
    messages: (await svc.db.query(`SELECT count(*)::int AS n FROM ${svc.t.outboundMessages}`)).rows,
  });

  it('refuses every write not covered by a fresh assertion of its own, changing nothing, and counts each refusal', async () => {
    const key = newKey('direct');
    const body = { customer_id: C.id, expected_version: 17, destination };
    const changed = { ...body, destination: { ...destination, city: 'Kraków' } };
    const before = await state();
    const target = `/customers/${C.id}/address-changes`;
    const url = `${svc.url}${target}`;
    const attempts = refusals('customers', target, key, body, changed);
    const recorded = svc.refused.length;
    for (const attempt of attempts) {
      const counted = await refusalCount(`${svc.url}/metrics`, attempt.code);
      const answer = await send(url, key, attempt.body ?? body, await attempt.assertion());
      expect({ case: attempt.case, status: answer.status, code: answer.code }).toEqual({
        case: attempt.case,
        status: attempt.status,
        code: attempt.code,
      });
      if (attempt.status === 401) expect(answer.challenge).toMatch(/^Bearer realm="gatehouse-call"/);
      expect(await refusalCount(`${svc.url}/metrics`, attempt.code)).toBe(counted + 1);
    }
    expect(await state()).toEqual(before);
    // The fault tests' audit names each refusal by its code: a 401's from its challenge, a 403's from its body.
    expect(svc.refused.slice(recorded).map((r) => r.code)).toEqual(attempts.map((a) => a.code));
  });

  it('applies the write its assertion covers once, and refuses the same assertion replayed', async () => {
    const key = newKey('direct');
    const body = { customer_id: C.id, expected_version: 17, destination };
    const target = `/customers/${C.id}/address-changes`;
    const assertion = await testAssertion('customers', { call: 'write', method: 'POST', target, idempotencyKey: key, body });
    const url = `${svc.url}${target}`;
    expect((await send(url, key, body, assertion)).status).toBe(200);
    const applied = await state();
    expect(applied.customer).toEqual([{ version: 18, line1: 'Piotrkowska 100', city: 'Łódź' }]);
    const replayed = await send(url, key, body, assertion);
    expect({ status: replayed.status, code: replayed.code }).toEqual({ status: 401, code: 'ASSERTION_REPLAYED' });
    expect(await refusalCount(`${svc.url}/metrics`, 'ASSERTION_REPLAYED')).toBe(1);
    expect(await state()).toEqual(applied);
  });

  it('refuses a write whose body names another customer than its path, and a status query for another key', async () => {
    const key = newKey('direct');
    const other = 'C-1001';
    const body = { customer_id: other, expected_version: 1, destination };
    const before = await state();
    const misdirected = await send(
      `${svc.url}/customers/${C.id}/address-changes`,
      key,
      body,
      await testAssertion('customers', {
        call: 'write',
        method: 'POST',
        target: `/customers/${C.id}/address-changes`,
        idempotencyKey: key,
        body,
      }),
    );
    expect({ status: misdirected.status, code: misdirected.code }).toEqual({ status: 400, code: 'INVALID_REQUEST' });
    const status = await fetch(`${svc.url}/operations/${key}`, {
      headers: {
        authorization: `Bearer ${await testAssertion('customers', { call: 'status', method: 'GET', target: `/operations/${key}`, idempotencyKey: 'another-key' })}`,
      },
    });
    expect(status.status).toBe(403);
    expect(await state()).toEqual(before);
  });

  it("reads only the assertion's tenant's rows: another tenant's customer is not found", async () => {
    const reply = await svc.call('GET', `/customers/${SEED.otherTenantCustomer.id}`, { tenant: null, assertion: { tenant: 'acme' } });
    expect(reply.status).toBe(404);
    const mismatch = await svc.call<{ error: { code: string } }>('GET', `/customers/${C.id}`, {
      tenant: 'acme',
      assertion: { tenant: 'globex' },
    });
    expect([mismatch.status, mismatch.body.error.code]).toEqual([403, 'TENANT_MISMATCH']);
  });
});

describe('the refunds service, called directly', () => {
  let refunds: RunningRefundsService;
  const order = REFUNDS_SEED.spareOrder;
  const schema = `t_refunds_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

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
  });
  afterAll(async () => {
    if (refunds === undefined) return;
    await refunds.db.query(`DROP SCHEMA IF EXISTS ${refunds.tables.schema} CASCADE`);
    await refunds.stop();
  });

  const state = async () => ({
    order: (await refunds.db.query(`SELECT refunded_minor, version FROM ${refunds.tables.orders} WHERE order_id = $1`, [order.orderId]))
      .rows,
    refunds: (await refunds.db.query(`SELECT count(*)::int AS n FROM ${refunds.tables.refunds}`)).rows,
  });

  it('refuses every refund not covered by a fresh assertion of its own, changing nothing, and counts each refusal', async () => {
    const key = `direct-${randomUUID()}`;
    const body = {
      order_id: order.orderId,
      expected_version: order.version,
      amount: { minor: 1_000, currency: 'EUR' },
      reason: 'goodwill',
    };
    const changed = { ...body, amount: { minor: 60_000, currency: 'EUR' } };
    const before = await state();
    const target = `/orders/${order.orderId}/refunds`;
    const url = `${refunds.url}${target}`;
    for (const attempt of refusals('refunds', target, key, body, changed)) {
      const counted = await refusalCount(`${refunds.url}/metrics`, attempt.code);
      const answer = await send(url, key, attempt.body ?? body, await attempt.assertion());
      expect({ case: attempt.case, status: answer.status, code: answer.code }).toEqual({
        case: attempt.case,
        status: attempt.status,
        code: attempt.code,
      });
      expect(await refusalCount(`${refunds.url}/metrics`, attempt.code)).toBe(counted + 1);
    }
    expect(await state()).toEqual(before);

    const assertion = await testAssertion('refunds', { call: 'write', method: 'POST', target, idempotencyKey: key, body });
    expect((await send(url, key, body, assertion)).status).toBe(201);
    const applied = await state();
    expect(applied.order).toEqual([{ refunded_minor: '1000', version: order.version + 1 }]);
    const replayed = await send(url, key, body, assertion);
    expect({ status: replayed.status, code: replayed.code }).toEqual({ status: 401, code: 'ASSERTION_REPLAYED' });
    expect(await state()).toEqual(applied);
  });
});
