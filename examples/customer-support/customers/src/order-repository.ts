import type { Tables } from './db.js';
import type { Queryable } from './customer-repository.js';

export const ORDER_STATES = { open: 'open', shipped: 'shipped', cancelled: 'cancelled' } as const;
export type OrderState = (typeof ORDER_STATES)[keyof typeof ORDER_STATES];

export interface Order {
  readonly order_id: string;
  readonly state: OrderState;
  readonly total: { readonly minor: number; readonly currency: string };
  readonly placed_at: string;
}

/** A keyset position: the (placed_at, order_id) of the last order of a page, exact to the microsecond. */
export interface OrderPosition {
  readonly placedAt: string;
  readonly orderId: string;
}

export interface OrderPage {
  readonly orders: readonly Order[];
  /** Position after which the next page starts; undefined on the last page. */
  readonly next: OrderPosition | undefined;
}

interface OrderRow {
  order_id: string;
  state: OrderState;
  total_minor: string;
  currency: string;
  placed_at: Date;
  position: string;
}

export class OrderRepository {
  constructor(private readonly t: Tables) {}

  /** Orders newest first, ties broken by order id descending, strictly after `after`. */
  async page(db: Queryable, customerId: string, state: OrderState, pageSize: number, after: OrderPosition | undefined): Promise<OrderPage> {
    const params: unknown[] = [customerId, state, pageSize + 1];
    let keyset = '';
    if (after !== undefined) {
      params.push(after.placedAt, after.orderId);
      keyset = 'AND (placed_at, order_id) < ($4::timestamptz, $5::text)';
    }
    const found = await db.query<OrderRow>(
      `SELECT order_id, state, total_minor, currency, placed_at,
              to_char(placed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position
       FROM ${this.t.orders}
       WHERE customer_id = $1 AND state = $2 ${keyset}
       ORDER BY placed_at DESC, order_id DESC
       LIMIT $3`,
      params,
    );
    const rows = found.rows.slice(0, pageSize);
    const last = rows[rows.length - 1];
    return {
      orders: rows.map((row) => ({
        order_id: row.order_id,
        state: row.state,
        total: { minor: Number(row.total_minor), currency: row.currency },
        placed_at: row.placed_at.toISOString(),
      })),
      next: found.rows.length > pageSize && last !== undefined ? { placedAt: last.position, orderId: last.order_id } : undefined,
    };
  }
}
