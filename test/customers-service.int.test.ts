import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { argumentsSha256, SEED } from '@gatehouse/customers';
import type { AddressChangeCommitted, AddressChangePreview, CustomerRecord, ErrorBody, Order } from '@gatehouse/customers';
import { eventually, newKey, startTestService } from './customers-harness.js';
import type { TestService } from './customers-harness.js';

interface OrdersPage {
  readonly orders: Order[];
  readonly cursor: string | null;
}

interface CustomerRow {
  version: number;
  line1: string;
  city: string;
  country: string;
  postal_code: string | null;
}

const C = SEED.customer;
const toHome = { kind: 'saved', address_id: 'addr_1842_home' } as const;
const toNew = { kind: 'new', line1: 'Piotrkowska 100', city: 'Łódź', country: 'PL', postal_code: '90-001' } as const;

async function customerRow(svc: TestService, id = C.id): Promise<CustomerRow> {
  const found = await svc.db.query<CustomerRow>(`SELECT version, line1, city, country, postal_code FROM ${svc.t.customers} WHERE id = $1`, [
    id,
  ]);
  const row = found.rows[0];
  if (row === undefined) throw new Error(`no row for ${id}`);
  return row;
}

async function keyRows(svc: TestService): Promise<{ key: string; status: string }[]> {
  return (await svc.db.query<{ key: string; status: string }>(`SELECT key, status FROM ${svc.t.idempotencyKeys}`)).rows;
}

/**
 * Holds C-1842's row lock while `fire` sends requests, releases it only once `waiters` backends of
 * this schema are blocked on locks: the requests then really race inside their transactions.
 */
async function raceOnLockedRow<T>(svc: TestService, waiters: number, fire: () => Promise<T>): Promise<T> {
  const holder = await svc.db.connect();
  try {
    await holder.query('BEGIN');
    await holder.query(`SELECT 1 FROM ${svc.t.customers} WHERE id = $1 FOR UPDATE`, [C.id]);
    const pending = fire();
    await eventually(
      async () => {
        const blocked = await svc.db.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND position($1 in query) > 0`,
          [svc.schema],
        );
        return Number(blocked.rows[0]?.n) >= waiters ? true : undefined;
      },
      10_000,
      `${waiters} requests to block`,
    );
    await holder.query('COMMIT');
    return await pending;
  } finally {
    holder.release();
  }
}

describe('customers service reads', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => svc.close());

  it('returns the full record of a customer, internal fields included, to a trusted caller', async () => {
    const reply = await svc.call<CustomerRecord>('GET', `/customers/${C.id}`);
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ id: C.id, tenant: 'acme', version: 17, name: 'Marta Kowalska' });
    expect(reply.body.shipping_address).toEqual({ line1: 'ul. Długa 12', city: 'Gdańsk', country: 'PL', postal_code: '80-827' });
    expect(reply.body.saved_addresses.map((a) => a.address_id)).toEqual(C.savedAddressIds);
    expect(typeof reply.body.internal_notes).toBe('string');
    expect(reply.body.credit_score).toBe(712);
  });

  it('answers 404 for a customer of another tenant, exactly as for one that does not exist', async () => {
    const other = await svc.call<ErrorBody>('GET', `/customers/${C.id}`, { tenant: 'globex' });
    const missing = await svc.call<ErrorBody>('GET', '/customers/C-9999', { tenant: 'globex' });
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('NOT_FOUND');
    expect(missing.status).toBe(404);
    expect(Object.keys(other.body.error).sort()).toEqual(Object.keys(missing.body.error).sort());
  });

  it('serves a request without x-tenant as the tenant its assertion names, and refuses a malformed x-tenant', async () => {
    const reply = await svc.call<{ id: string; tenant: string }>('GET', `/customers/${C.id}`, { tenant: null });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ id: C.id, tenant: 'acme' });
    const malformed = await svc.call<ErrorBody>('GET', `/customers/${C.id}`, { tenant: 'ACME!', assertion: { tenant: 'acme' } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'x-tenant', retryable: false });
  });

  it('walks every open order with the cursor, never more than page_size, without duplicates, in a stable order', async () => {
    const seen: Order[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `state=open&page_size=7${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      const reply = await svc.call<OrdersPage>('GET', `/customers/${C.id}/orders?${query}`);
      expect(reply.status).toBe(200);
      expect(reply.body.orders.length).toBeLessThanOrEqual(7);
      sizes.push(reply.body.orders.length);
      seen.push(...reply.body.orders);
      cursor = reply.body.cursor;
    } while (cursor !== null && sizes.length < 20);
    const expected = await svc.db.query<{ order_id: string }>(
      `SELECT order_id FROM ${svc.t.orders} WHERE customer_id = $1 AND state = 'open' ORDER BY placed_at DESC, order_id DESC`,
      [C.id],
    );
    expect(sizes).toEqual([7, 7, 6]);
    expect(new Set(seen.map((o) => o.order_id)).size).toBe(seen.length);
    expect(seen.map((o) => o.order_id)).toEqual(expected.rows.map((r) => r.order_id));
    expect(seen.length).toBe(SEED.ordersOfC1842ByState.open);
    expect(seen.every((o) => o.state === 'open' && Number.isInteger(o.total.minor) && o.total.currency === 'EUR')).toBe(true);
  });

  it('returns the last page with a null cursor when everything fits', async () => {
    const reply = await svc.call<OrdersPage>('GET', `/customers/${C.id}/orders?state=shipped&page_size=50`);
    expect(reply.body.orders).toHaveLength(SEED.ordersOfC1842ByState.shipped);
    expect(reply.body.cursor).toBeNull();
  });

  it('refuses a tampered, foreign or garbage cursor with 400 INVALID_REQUEST', async () => {
    const first = await svc.call<OrdersPage>('GET', `/customers/${C.id}/orders?state=open&page_size=5`);
    const cursor = first.body.cursor ?? '';
    const [payload = '', tag = ''] = cursor.split('.');
    const position = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { p: string; o: string };
    const edited = Buffer.from(JSON.stringify({ ...position, o: 'O-1842-999' })).toString('base64url');
    for (const bad of [`${edited}.${tag}`, 'not-a-cursor', `${payload}.AAAA`]) {
      const reply = await svc.call<ErrorBody>('GET', `/customers/${C.id}/orders?state=open&page_size=5&cursor=${encodeURIComponent(bad)}`);
      expect(reply.status).toBe(400);
      expect(reply.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'cursor' });
    }
    const foreign = await svc.call<ErrorBody>(
      'GET',
      `/customers/${C.id}/orders?state=shipped&page_size=5&cursor=${encodeURIComponent(cursor)}`,
    );
    expect(foreign.status).toBe(400);
  });

  it.each([
    ['page_size=5', 'state'],
    ['state=open', 'page_size'],
    ['state=open&page_size=0', 'page_size'],
    ['state=open&page_size=51', 'page_size'],
    ['state=lost&page_size=5', 'state'],
    ['state=open&page_size=5&limit=9', 'limit'],
  ])('refuses the order listing query %s naming the field %s', async (query, field) => {
    const reply = await svc.call<ErrorBody>('GET', `/customers/${C.id}/orders?${query}`);
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ code: 'INVALID_REQUEST', field });
  });

  it('previews an address change without changing anything', async () => {
    const before = await customerRow(svc);
    const reply = await svc.call<AddressChangePreview>('POST', `/customers/${C.id}/address-changes/preview`, {
      body: { destination: toHome },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      customer_id: C.id,
      current_version: 17,
      before: { line1: 'ul. Długa 12', city: 'Gdańsk', country: 'PL', postal_code: '80-827' },
      after: { line1: 'Rynek Główny 1', city: 'Kraków', country: 'PL', postal_code: '31-042' },
      changed_fields: ['shipping_address'],
    });
    expect(await customerRow(svc)).toEqual(before);
    expect(await keyRows(svc)).toEqual([]);
  });

  it('answers 404 to a preview naming a saved address the customer does not have', async () => {
    const reply = await svc.call<ErrorBody>('POST', `/customers/${C.id}/address-changes/preview`, {
      body: { destination: { kind: 'saved', address_id: 'addr_1001_alt' } },
    });
    expect(reply.status).toBe(404);
    expect(reply.body.error).toMatchObject({ code: 'NOT_FOUND', field: 'destination.address_id' });
  });

  it('rejects unknown fields and mixed union branches instead of ignoring them', async () => {
    const extra = await svc.call<ErrorBody>('POST', `/customers/${C.id}/address-changes/preview`, {
      body: { destination: { ...toNew, apartment: '4' } },
    });
    const mixed = await svc.call<ErrorBody>('POST', `/customers/${C.id}/address-changes/preview`, {
      body: { destination: { ...toHome, line1: 'x' } },
    });
    expect(extra.status).toBe(400);
    expect(extra.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'destination.apartment' });
    expect(mixed.status).toBe(400);
  });

  it('answers healthz and readyz', async () => {
    expect((await svc.call('GET', '/healthz', { tenant: null })).status).toBe(200);
    expect((await svc.call('GET', '/readyz', { tenant: null })).body).toEqual({ status: 'ready' });
  });
});

describe('committing an address change', () => {
  let svc: TestService;
  beforeEach(async () => {
    svc = await startTestService();
  });
  afterEach(async () => svc.close());

  const commit = (key: string, expected: number, destination: object = toNew) =>
    svc.call<AddressChangeCommitted & ErrorBody>('POST', `/customers/${C.id}/address-changes`, {
      key,
      body: { customer_id: C.id, expected_version: expected, destination },
    });

  it('applies the change at the expected version, bumps the version by one and stores the key with the write', async () => {
    const key = newKey();
    const reply = await commit(key, 17);
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ customer_id: C.id, previous_version: 17, new_version: 18, changed_fields: ['shipping_address'] });
    expect(Number.isNaN(Date.parse(reply.body.committed_at))).toBe(false);
    expect(await customerRow(svc)).toEqual({ version: 18, line1: 'Piotrkowska 100', city: 'Łódź', country: 'PL', postal_code: '90-001' });
    const stored = await svc.db.query<{ status: string; arguments_sha256: string; response: unknown }>(
      `SELECT status, arguments_sha256, response FROM ${svc.t.idempotencyKeys} WHERE key = $1`,
      [key],
    );
    expect(stored.rows).toEqual([
      {
        status: 'succeeded',
        arguments_sha256: argumentsSha256({ customer_id: C.id, expected_version: 17, destination: toNew }),
        response: reply.body,
      },
    ]);
  });

  it('refuses a stale expected version with 409 VERSION_CONFLICT and current_version, changing nothing', async () => {
    const reply = await commit(newKey(), 16, toHome);
    expect(reply.status).toBe(409);
    expect(reply.body.error).toMatchObject({ code: 'VERSION_CONFLICT', current_version: 17, field: 'expected_version', retryable: false });
    expect((await customerRow(svc)).version).toBe(17);
    expect((await customerRow(svc)).city).toBe('Gdańsk');
  });

  it('lets exactly one of ten concurrent commits at the same expected version win', async () => {
    const replies = await raceOnLockedRow(svc, 10, () =>
      Promise.all(Array.from({ length: 10 }, (_, i) => commit(newKey(`race${i}`), 17, i % 2 === 0 ? toNew : toHome))),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    for (const loser of replies.filter((r) => r.status === 409)) expect(loser.body.error.current_version).toBe(18);
    expect((await customerRow(svc)).version).toBe(18);
    const keys = await keyRows(svc);
    expect(keys.filter((k) => k.status === 'succeeded')).toHaveLength(1);
    expect(keys.filter((k) => k.status === 'failed')).toHaveLength(9);
  });

  it('replays the stored response for the same key and arguments, with Idempotent-Replay, changing the row once', async () => {
    const key = newKey();
    const first = await commit(key, 17);
    const again = await commit(key, 17);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(first.headers.get('idempotent-replay')).toBeNull();
    expect(again.headers.get('idempotent-replay')).toBe('true');
    expect((await customerRow(svc)).version).toBe(18);
  });

  it('applies concurrent requests carrying the same key once and replays the rest', async () => {
    const key = newKey();
    const replies = await raceOnLockedRow(svc, 8, () => Promise.all(Array.from({ length: 8 }, () => commit(key, 17))));
    expect(replies.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(replies.filter((r) => r.headers.get('idempotent-replay') === 'true')).toHaveLength(7);
    expect(new Set(replies.map((r) => r.body.committed_at)).size).toBe(1);
    expect((await customerRow(svc)).version).toBe(18);
  });

  it('refuses a key reused with other arguments with 422 IDEMPOTENCY_KEY_REUSED and changes nothing', async () => {
    const key = newKey();
    await commit(key, 17, toNew);
    const reused = await commit(key, 17, toHome);
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    const onEmail = await svc.call<ErrorBody>('POST', `/customers/${C.id}/emails`, {
      key,
      body: { customer_id: C.id, subject: 's', body: 'b' },
    });
    expect(onEmail.status).toBe(422);
    expect(await customerRow(svc)).toMatchObject({ version: 18, city: 'Łódź' });
    expect((await svc.db.query(`SELECT 1 FROM ${svc.t.outboundMessages}`)).rowCount).toBe(0);
  });

  it('replays a stored VERSION_CONFLICT for the same key even after the version moved on', async () => {
    const key = newKey();
    const first = await commit(key, 16, toHome);
    const again = await commit(key, 16, toHome);
    expect(first.status).toBe(409);
    expect(again.status).toBe(409);
    expect(again.headers.get('idempotent-replay')).toBe('true');
    expect(again.body).toEqual(first.body);
  });

  it('requires the Idempotency-Key its assertion names', async () => {
    const body = { customer_id: C.id, expected_version: 17, destination: toHome };
    const reply = await svc.call<ErrorBody>('POST', `/customers/${C.id}/address-changes`, {
      body,
      assertion: {
        call: 'write',
        idempotencyKey: 'run-test:prop-test:op',
        argumentsSha256: argumentsSha256(body),
        approvalId: 'appr-test',
      },
    });
    expect(reply.status).toBe(403);
    expect(reply.body.error).toMatchObject({ code: 'IDEMPOTENCY_KEY_MISMATCH' });
    expect(await keyRows(svc)).toEqual([]);
  });

  it('answers the status query with succeeded, failed or unknown, per tenant', async () => {
    const won = newKey();
    const lost = newKey();
    const committed = await commit(won, 17);
    await commit(lost, 17);
    const succeeded = await svc.call<{ status: string; response: unknown }>('GET', `/operations/${won}`);
    expect(succeeded.status).toBe(200);
    expect(succeeded.body).toMatchObject({ key: won, status: 'succeeded', operation: 'address_change', response: committed.body });
    const failed = await svc.call<{ status: string; error: { code: string; current_version: number } }>('GET', `/operations/${lost}`);
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({ key: lost, status: 'failed', error: { code: 'VERSION_CONFLICT', current_version: 18 } });
    const unknown = await svc.call('GET', `/operations/${newKey()}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ status: 'unknown' });
    const otherTenant = await svc.call('GET', `/operations/${won}`, { tenant: 'globex' });
    expect(otherTenant.status).toBe(404);
    expect(otherTenant.body).toMatchObject({ status: 'unknown' });
  });
});
