import { defineTool, implement } from '@gatehouse/sdk';
import type { ToolImplementation } from '@gatehouse/sdk';
import type { CustomersClient } from '../customers-client.js';
import { customerId, money, timestamp } from '../schema-parts.js';
import { expectShape, pick } from '../upstream-body.js';

export const listOpenOrdersForCustomer = defineTool({
  name: 'list_open_orders_for_customer',
  version: 1,
  description:
    'List the open orders of one customer, newest first, one page at a time. Pass the returned cursor to get the next page; a null cursor means the last page.',
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

const ORDER_FIELDS = ['order_id', 'state', 'total', 'placed_at'] as const;
const MONEY_FIELDS = ['minor', 'currency'] as const;

/** An order of the service, reduced to the view's fields. */
function orderView(order: unknown): unknown {
  const view = pick(order, ORDER_FIELDS);
  return view === undefined ? undefined : { ...view, total: pick(view['total'], MONEY_FIELDS) };
}

export function listOpenOrdersTool(customers: CustomersClient): ToolImplementation {
  return implement(listOpenOrdersForCustomer, {
    async run(args, context) {
      const query = new URLSearchParams({ state: 'open', page_size: String(args.page_size) });
      if (args.cursor !== undefined) query.set('cursor', args.cursor);
      const { body } = await customers.call({
        method: 'GET',
        path: `/customers/${encodeURIComponent(args.customer_id)}/orders?${query.toString()}`,
        context,
      });
      return expectShape(
        body,
        (page) => {
          const orders = page['orders'];
          return Array.isArray(orders) ? { orders: orders.map(orderView), cursor: page['cursor'] } : undefined;
        },
        false,
      );
    },
  });
}
