import type { Pool } from 'pg';
import { withTransaction } from '@gatehouse/pg';
import { tablesIn } from './db.js';

interface SeedOrder {
  readonly orderId: string;
  readonly tenant: string;
  readonly customerRef: string;
  readonly currency: string;
  readonly totalMinor: number;
  readonly refundedMinor: number;
  readonly version: number;
  readonly placedAt: string;
}

const SEED_UPDATED_AT = '2026-08-01T09:30:00Z';

/** The seed's orders: what tests and demos rely on (see SEED). */
const ORDERS: readonly SeedOrder[] = [
  {
    orderId: 'ORD-1001',
    tenant: 'acme',
    customerRef: 'C-1842',
    currency: 'EUR',
    totalMinor: 12_000,
    refundedMinor: 0,
    version: 1,
    placedAt: '2026-07-02T10:15:00Z',
  },
  {
    orderId: 'ORD-1002',
    tenant: 'acme',
    customerRef: 'C-1001',
    currency: 'EUR',
    totalMinor: 149_900,
    refundedMinor: 0,
    version: 2,
    placedAt: '2026-07-09T16:40:00Z',
  },
  {
    orderId: 'ORD-1003',
    tenant: 'acme',
    customerRef: 'C-1002',
    currency: 'USD',
    totalMinor: 8_990,
    refundedMinor: 2_000,
    version: 3,
    placedAt: '2026-07-14T08:05:00Z',
  },
  {
    orderId: 'ORD-1004',
    tenant: 'acme',
    customerRef: 'C-1003',
    currency: 'GBP',
    totalMinor: 4_500,
    refundedMinor: 4_500,
    version: 4,
    placedAt: '2026-07-20T12:00:00Z',
  },
  {
    orderId: 'ORD-1005',
    tenant: 'acme',
    customerRef: 'C-1004',
    currency: 'EUR',
    totalMinor: 64_000,
    refundedMinor: 0,
    version: 1,
    placedAt: '2026-07-28T19:30:00Z',
  },
  {
    orderId: 'ORD-2001',
    tenant: 'globex',
    customerRef: 'C-2001',
    currency: 'EUR',
    totalMinor: 6_000,
    refundedMinor: 0,
    version: 1,
    placedAt: '2026-07-03T09:00:00Z',
  },
];

/** Facts about the seed that tests and demos rely on. */
export const SEED = {
  tenants: ['acme', 'globex'],
  /** EUR 120.00, nothing refunded yet, version 1. */
  smallOrder: { orderId: 'ORD-1001', tenant: 'acme', currency: 'EUR', totalMinor: 12_000, refundedMinor: 0, version: 1 },
  /** EUR 1,499.00, nothing refunded yet, version 2: room for a refund over 500.00. */
  largeOrder: { orderId: 'ORD-1002', tenant: 'acme', currency: 'EUR', totalMinor: 149_900, refundedMinor: 0, version: 2 },
  /** USD 89.90, 20.00 refunded already, version 3. */
  partlyRefundedOrder: { orderId: 'ORD-1003', tenant: 'acme', currency: 'USD', totalMinor: 8_990, refundedMinor: 2_000, version: 3 },
  /** GBP 45.00, refunded in full, version 4: nothing left to refund. */
  fullyRefundedOrder: { orderId: 'ORD-1004', tenant: 'acme', currency: 'GBP', totalMinor: 4_500, refundedMinor: 4_500, version: 4 },
  /** EUR 640.00, nothing refunded yet, version 1. */
  spareOrder: { orderId: 'ORD-1005', tenant: 'acme', currency: 'EUR', totalMinor: 64_000, refundedMinor: 0, version: 1 },
  otherTenantOrder: { orderId: 'ORD-2001', tenant: 'globex' },
  /** The refunds already made on ORD-1003 and ORD-1004, one each. */
  seededRefunds: [
    { refundId: 'RF-5EED00001003', orderId: 'ORD-1003', amountMinor: 2_000, reason: 'damaged' },
    { refundId: 'RF-5EED00001004', orderId: 'ORD-1004', amountMinor: 4_500, reason: 'not_delivered' },
  ],
  orderCount: ORDERS.length,
} as const;

/** Inserts the deterministic seed if the orders table is empty. Returns whether it seeded. */
export async function seedIfEmpty(pool: Pool, schema: string): Promise<boolean> {
  const t = tablesIn(schema);
  return withTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`gatehouse-refunds-seed:${schema}`]);
    const existing = await client.query(`SELECT 1 FROM ${t.orders} LIMIT 1`);
    if (existing.rowCount !== 0) return false;
    for (const o of ORDERS) {
      await client.query(
        `INSERT INTO ${t.orders} (order_id, tenant, customer_ref, currency, total_minor, refunded_minor, version, payment_reference, placed_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          o.orderId,
          o.tenant,
          o.customerRef,
          o.currency,
          o.totalMinor,
          o.refundedMinor,
          o.version,
          `psp_ch_${o.orderId.slice(4)}_demo`,
          o.placedAt,
          SEED_UPDATED_AT,
        ],
      );
    }
    for (const r of SEED.seededRefunds) {
      const order = ORDERS.find((o) => o.orderId === r.orderId);
      if (order === undefined) throw new Error(`seed refund ${r.refundId} names no seeded order`);
      await client.query(
        `INSERT INTO ${t.refunds} (refund_id, tenant, order_id, amount_minor, currency, reason, order_version, idempotency_key, refunded_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [
          r.refundId,
          order.tenant,
          r.orderId,
          r.amountMinor,
          order.currency,
          r.reason,
          order.version,
          `seed:${r.refundId}`,
          SEED_UPDATED_AT,
        ],
      );
    }
    return true;
  });
}
