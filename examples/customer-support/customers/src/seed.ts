import type { Pool, PoolClient } from 'pg';
import { tablesIn, withTransaction } from './db.js';
import type { Tables } from './db.js';
import type { OrderState } from './order-repository.js';

interface SeedAddress {
  readonly line1: string;
  readonly city: string;
  readonly country: string;
  readonly postal_code: string | null;
}

interface SeedCustomer {
  readonly id: string;
  readonly tenant: string;
  readonly name: string;
  readonly email: string;
  readonly phone: string;
  readonly address: SeedAddress;
  readonly version: number;
  readonly internalNotes: string;
  readonly creditScore: number;
  readonly saved: readonly (SeedAddress & { readonly address_id: string })[];
  readonly orders: number;
}

/** id, name, line1, city, country, postal code */
type CustomerFields = readonly [string, string, string, string, string, string | null];

const CUSTOMERS: readonly SeedCustomer[] = [
  {
    id: 'C-1842',
    tenant: 'acme',
    name: 'Marta Kowalska',
    email: 'marta.kowalska@example.com',
    phone: '+48 58 555 0142',
    address: { line1: 'ul. Długa 12', city: 'Gdańsk', country: 'PL', postal_code: '80-827' },
    version: 17,
    internalNotes: 'Escalated twice in 2025; goodwill credit approved by J. Nowak.',
    creditScore: 712,
    saved: [
      { address_id: 'addr_1842_home', line1: 'Rynek Główny 1', city: 'Kraków', country: 'PL', postal_code: '31-042' },
      { address_id: 'addr_1842_office', line1: 'Karl Johans gate 5', city: 'Oslo', country: 'NO', postal_code: '0154' },
    ],
    orders: 60,
  },
  ...(
    [
      ['C-1001', 'Jonas Berg', 'Storgatan 3', 'Stockholm', 'SE', '111 51'],
      ['C-1002', 'Aino Virtanen', 'Mannerheimintie 10', 'Helsinki', 'FI', '00100'],
      ['C-1003', 'Lucas Martin', '12 rue de Rivoli', 'Paris', 'FR', '75004'],
      ['C-1004', 'Sofia Rossi', 'Via Roma 8', 'Torino', 'IT', '10121'],
      ['C-1005', 'Pieter de Vries', 'Damrak 70', 'Amsterdam', 'NL', '1012 LM'],
    ] satisfies CustomerFields[]
  ).map((fields) => seedCustomer('acme', fields)),
  ...(
    [
      ['C-2001', 'Hana Novák', 'Národní 20', 'Praha', 'CZ', '110 00'],
      ['C-2002', 'Miguel Santos', 'Rua Augusta 100', 'Lisboa', 'PT', '1100-053'],
      ['C-2003', 'Emma Schmidt', 'Friedrichstraße 43', 'Berlin', 'DE', '10117'],
      ['C-2004', 'Liam Murphy', '5 Grafton Street', 'Dublin', 'IE', null],
    ] satisfies CustomerFields[]
  ).map((fields) => seedCustomer('globex', fields)),
];

function seedCustomer(tenant: string, [id, name, line1, city, country, postal]: CustomerFields): SeedCustomer {
  const n = Number(id.slice(2));
  return {
    id,
    tenant,
    name,
    email: `${name.toLowerCase().replace(/[^a-z]+/g, '.')}@example.com`,
    phone: `+00 555 ${String(n).padStart(4, '0')}`,
    address: { line1, city, country, postal_code: postal },
    version: 1 + (n % 5),
    internalNotes: `Seeded account ${id}.`,
    creditScore: 600 + (n % 200),
    saved: [{ address_id: `addr_${n}_alt`, line1: `${line1} (rear entrance)`, city, country, postal_code: postal }],
    orders: 3,
  };
}

const ORDER_STATES: readonly OrderState[] = ['open', 'shipped', 'cancelled'];
const ORDERS_EPOCH = Date.parse('2026-01-05T08:00:00Z');
const SEED_UPDATED_AT = '2026-08-01T09:30:00Z';

/** Facts about the seed that tests and demos rely on. */
export const SEED = {
  tenants: ['acme', 'globex'],
  customer: { id: 'C-1842', tenant: 'acme', version: 17, savedAddressIds: ['addr_1842_home', 'addr_1842_office'] },
  otherTenantCustomer: { id: 'C-2001', tenant: 'globex' },
  /** Orders of C-1842 by state: order i has state ORDER_STATES[i % 3], pairs share a placed_at. */
  ordersOfC1842ByState: { open: 20, shipped: 20, cancelled: 20 },
  customerCount: CUSTOMERS.length,
} as const;

async function insertCustomer(client: PoolClient, t: Tables, c: SeedCustomer): Promise<void> {
  await client.query(
    `INSERT INTO ${t.customers} (id, tenant, name, email, phone, line1, city, country, postal_code, version, updated_at, internal_notes, credit_score)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
    [
      c.id,
      c.tenant,
      c.name,
      c.email,
      c.phone,
      c.address.line1,
      c.address.city,
      c.address.country,
      c.address.postal_code,
      c.version,
      SEED_UPDATED_AT,
      c.internalNotes,
      c.creditScore,
    ],
  );
  for (const [position, a] of c.saved.entries()) {
    await client.query(
      `INSERT INTO ${t.savedAddresses} (address_id, customer_id, position, line1, city, country, postal_code) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [a.address_id, c.id, position, a.line1, a.city, a.country, a.postal_code],
    );
  }
  const ids: string[] = [];
  const states: string[] = [];
  const totals: number[] = [];
  const placed: string[] = [];
  for (let i = 0; i < c.orders; i++) {
    ids.push(`O-${c.id.slice(2)}-${String(i + 1).padStart(3, '0')}`);
    states.push(ORDER_STATES[i % ORDER_STATES.length] ?? 'open');
    totals.push(1_000 + ((i * 7_331) % 48_000));
    placed.push(new Date(ORDERS_EPOCH + Math.floor(i / 2) * 6 * 3_600_000).toISOString());
  }
  await client.query(
    `INSERT INTO ${t.orders} (order_id, tenant, customer_id, state, total_minor, currency, placed_at)
     SELECT o.id, $1, $2, o.state, o.total, 'EUR', o.placed
     FROM unnest($3::text[], $4::text[], $5::bigint[], $6::timestamptz[]) AS o(id, state, total, placed)`,
    [c.tenant, c.id, ids, states, totals, placed],
  );
}

/** Inserts the deterministic seed if the customers table is empty. Returns whether it seeded. */
export async function seedIfEmpty(pool: Pool, schema: string): Promise<boolean> {
  const t = tablesIn(schema);
  return withTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`gatehouse-customers-seed:${schema}`]);
    const existing = await client.query(`SELECT 1 FROM ${t.customers} LIMIT 1`);
    if (existing.rowCount !== 0) return false;
    for (const customer of CUSTOMERS) await insertCustomer(client, t, customer);
    return true;
  });
}
