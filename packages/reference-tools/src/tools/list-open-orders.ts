import { defineTool, implement } from '@gatehouse/contracts';
import { callCustomers } from '../customers-api.js';
import { customerId, money, timestamp } from '../schema-parts.js';

export const listOpenOrdersForCustomer = defineTool({
  name: 'list_open_orders_for_customer',
  version: 1,
  description: 'List the open orders of one customer, newest first, one page at a time. Pass the returned cursor to get the next page; a null cursor means the last page.',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['customer_id', 'page_size'],
    properties: {
      customer_id: customerId,
      page_size: { type: 'integer', minimum: 1, maximum: 50 },
      cursor: { type: 'string', minLength: 1, maxLength: 512 },
    },
  },
  output: {
    type: 'object',
    additionalProperties: false,
    required: ['orders', 'cursor'],
    properties: {
      orders: {
        type: 'array',
        maxItems: 50,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['order_id', 'state', 'total', 'placed_at'],
          properties: {
            order_id: { type: 'string' },
            state: { const: 'open' },
            total: money,
            placed_at: timestamp,
          },
        },
      },
      cursor: { type: ['string', 'null'] },
    },
  },
  effect: 'read',
  retry: 'safe',
  timeoutMs: 3_000,
  rateLimit: { limit: 300, windowMs: 60_000, per: 'run' },
  cancel: 'none',
  maxResultBytes: 32_768,
  pagination: { maxPageSize: 50 },
} as const);

type Order = { order_id: string; state: string; total: { minor: number; currency: string }; placed_at: string };

export const listOpenOrdersTool = implement(listOpenOrdersForCustomer, {
  async run(args, context) {
    const query = new URLSearchParams({ state: 'open', page_size: String(args.page_size) });
    if (args.cursor !== undefined) query.set('cursor', args.cursor);
    const { body } = await callCustomers({
      method: 'GET',
      path: `/customers/${encodeURIComponent(args.customer_id)}/orders?${query.toString()}`,
      context,
    });
    const page = body as { orders: Order[]; cursor: string | null };
    return {
      orders: page.orders.map((o) => ({ order_id: o.order_id, state: o.state, total: { minor: o.total.minor, currency: o.total.currency }, placed_at: o.placed_at })),
      cursor: page.cursor,
    };
  },
});
