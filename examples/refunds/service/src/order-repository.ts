import type { Pool, PoolClient } from 'pg';
import type { Tables } from './db.js';
import { minorOf } from './money.js';
import type { Money } from './money.js';
import type { RefundReason } from './refund-reasons.js';

export type Queryable = Pool | PoolClient;

export interface RefundRecord {
  readonly refund_id: string;
  readonly amount: Money;
  readonly reason: RefundReason;
  readonly refunded_at: string;
}

/** The full order, for trusted callers: `customer_ref` and `payment_reference` included. */
export interface OrderRecord {
  readonly order_id: string;
  readonly tenant: string;
  readonly customer_ref: string;
  readonly total: Money;
  readonly refunded: Money;
  readonly refundable: Money;
  readonly version: number;
  readonly payment_reference: string;
  readonly placed_at: string;
  readonly updated_at: string;
}

interface OrderRow {
  order_id: string;
  tenant: string;
  customer_ref: string;
  currency: string;
  total_minor: string;
  refunded_minor: string;
  version: number;
  payment_reference: string;
  placed_at: Date;
  updated_at: Date;
}

interface RefundRow {
  refund_id: string;
  amount_minor: string;
  currency: string;
  reason: RefundReason;
  refunded_at: Date;
}

/** At most this many refunds are listed with an order, newest first. */
export const RECENT_REFUNDS = 50;

function orderOf(row: OrderRow): OrderRecord {
  const total = minorOf(row.total_minor);
  const refunded = minorOf(row.refunded_minor);
  return {
    order_id: row.order_id,
    tenant: row.tenant,
    customer_ref: row.customer_ref,
    total: { minor: total, currency: row.currency },
    refunded: { minor: refunded, currency: row.currency },
    refundable: { minor: total - refunded, currency: row.currency },
    version: row.version,
    payment_reference: row.payment_reference,
    placed_at: row.placed_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export class OrderRepository {
  constructor(private readonly t: Tables) {}

  /** The tenant's order, or undefined; `forUpdate` locks the row until the transaction ends. */
  async find(db: Queryable, tenant: string, orderId: string, forUpdate = false): Promise<OrderRecord | undefined> {
    const found = await db.query<OrderRow>(
      `SELECT * FROM ${this.t.orders} WHERE order_id = $1 AND tenant = $2${forUpdate ? ' FOR UPDATE' : ''}`,
      [orderId, tenant],
    );
    const row = found.rows[0];
    return row === undefined ? undefined : orderOf(row);
  }

  async recentRefunds(db: Queryable, orderId: string): Promise<RefundRecord[]> {
    const found = await db.query<RefundRow>(
      `SELECT refund_id, amount_minor, currency, reason, refunded_at FROM ${this.t.refunds}
       WHERE order_id = $1 ORDER BY refunded_at DESC, refund_id DESC LIMIT ${RECENT_REFUNDS}`,
      [orderId],
    );
    return found.rows.map((row) => ({
      refund_id: row.refund_id,
      amount: { minor: minorOf(row.amount_minor), currency: row.currency },
      reason: row.reason,
      refunded_at: row.refunded_at.toISOString(),
    }));
  }

  /**
   * Inside the write's transaction, on a row locked by `find(…, true)`: records the refund under its
   * idempotency key, adds it to the order's refunded total and bumps the version.
   */
  async applyRefund(
    db: PoolClient,
    order: OrderRecord,
    refund: { readonly refundId: string; readonly amount: Money; readonly reason: RefundReason; readonly idempotencyKey: string },
  ): Promise<{ readonly version: number; readonly refundedAt: string }> {
    const updated = await db.query<{ version: number; updated_at: Date }>(
      `UPDATE ${this.t.orders} SET refunded_minor = refunded_minor + $2, version = version + 1, updated_at = clock_timestamp()
       WHERE order_id = $1 RETURNING version, updated_at`,
      [order.order_id, refund.amount.minor],
    );
    const row = updated.rows[0];
    if (row === undefined) throw new Error(`order ${order.order_id} vanished inside its own transaction`);
    await db.query(
      `INSERT INTO ${this.t.refunds} (refund_id, tenant, order_id, amount_minor, currency, reason, order_version, idempotency_key, refunded_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        refund.refundId,
        order.tenant,
        order.order_id,
        refund.amount.minor,
        refund.amount.currency,
        refund.reason,
        row.version,
        refund.idempotencyKey,
        row.updated_at,
      ],
    );
    return { version: row.version, refundedAt: row.updated_at.toISOString() };
  }
}
