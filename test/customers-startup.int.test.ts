import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  customersConfigFromEnv,
  ensureDatabase,
  migrate,
  SCHEMA_VERSION,
  SEED,
  seedIfEmpty,
  startCustomersService,
  tablesIn,
} from '@gatehouse/customers';
import { createLogger } from '@gatehouse/telemetry';
import { assertionFor, DATABASE_URL } from './customers-harness.js';
import { TEST_ASSERTION_ISSUER, TEST_ASSERTION_JWKS } from './support/signing.js';

describe('customers service start-up', () => {
  const schema = `t_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const t = tablesIn(schema);
  let db: pg.Pool;

  beforeAll(async () => {
    await Promise.all([ensureDatabase(DATABASE_URL), ensureDatabase(DATABASE_URL)]);
    db = new pg.Pool({ connectionString: DATABASE_URL });
  });
  afterAll(async () => {
    await db.query(`DROP SCHEMA IF EXISTS ${t.schema} CASCADE`);
    await db.end();
  });

  it('applies each migration once when two instances migrate the same schema at the same time', async () => {
    const [a, b] = await Promise.all([migrate(db, schema), migrate(db, schema)]);
    expect([...(a ?? []), ...(b ?? [])].sort()).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
    expect(await migrate(db, schema)).toEqual([]);
    const rows = await db.query<{ version: number }>(`SELECT version FROM ${t.migrations} ORDER BY version`);
    expect(rows.rows.map((r) => r.version)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
  });

  it('seeds an empty schema once, deterministically', async () => {
    const [a, b] = await Promise.all([seedIfEmpty(db, schema), seedIfEmpty(db, schema)]);
    expect([a, b].filter(Boolean)).toHaveLength(1);
    const customers = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${t.customers}`);
    expect(Number(customers.rows[0]?.n)).toBe(SEED.customerCount);
    const byState = await db.query<{ state: string; n: string }>(
      `SELECT state, count(*) AS n FROM ${t.orders} WHERE customer_id = $1 GROUP BY state ORDER BY state`,
      [SEED.customer.id],
    );
    expect(Object.fromEntries(byState.rows.map((r) => [r.state, Number(r.n)]))).toEqual(SEED.ordersOfC1842ByState);
  });

  it("starts from environment settings with the executors' key set as a file, answers readyz and closes cleanly", async () => {
    const jwks = join(mkdtempSync(join(tmpdir(), 'customers-')), 'jwks.json');
    writeFileSync(jwks, JSON.stringify(TEST_ASSERTION_JWKS));
    const config = customersConfigFromEnv({
      DATABASE_URL,
      CUSTOMERS_PORT: '0',
      CUSTOMERS_DB_SCHEMA: schema,
      CUSTOMERS_ASSERTION_KEYS: jwks,
      CUSTOMERS_ASSERTION_ISSUER: TEST_ASSERTION_ISSUER,
    });
    expect(config.faultsEnabled).toBe(false);
    const service = await startCustomersService(config, createLogger('customers-test', { level: 'error' }));
    try {
      const ready = await fetch(`${service.url}/readyz`);
      expect(ready.status).toBe(200);
      const path = `/customers/${SEED.customer.id}`;
      const unproved = await fetch(`${service.url}${path}`, { headers: { 'x-tenant': 'acme' } });
      expect(unproved.status).toBe(401);
      const assertion = await assertionFor('GET', path, {});
      const customer = await fetch(`${service.url}${path}`, { headers: { 'x-tenant': 'acme', authorization: `Bearer ${assertion}` } });
      expect(((await customer.json()) as { version: number }).version).toBe(17);
    } finally {
      await service.close();
    }
    await expect(fetch(`${service.url}/healthz`)).rejects.toThrow();
  });

  it('refuses settings it cannot use', () => {
    const keys = { CUSTOMERS_ASSERTION_KEYS: 'http://127.0.0.1:8092/.well-known/jwks.json' };
    expect(() => customersConfigFromEnv({ ...keys, CUSTOMERS_DB_SCHEMA: 'Robert"); DROP' })).toThrow(/schema/);
    expect(() => customersConfigFromEnv({ ...keys, CUSTOMERS_PORT: '70000' })).toThrow(/CUSTOMERS_PORT/);
    expect(() => customersConfigFromEnv({ ...keys, CUSTOMERS_FAULTS: 'yes' })).toThrow(/CUSTOMERS_FAULTS/);
  });
});
