import type { Destination } from './address-change.js';
import { ServiceError } from './errors.js';
import { idParams, previewBody } from './http-schemas.js';
import { ORDER_STATES } from './order-repository.js';
import type { OrderPosition, OrderState } from './order-repository.js';
import type { Services } from './services.js';
import type { CustomersApp } from './http-context.js';

export const MAX_PAGE_SIZE = 50;

interface OrdersQuery {
  readonly state: OrderState;
  readonly pageSize: number;
  readonly cursor: string | undefined;
}

function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new ServiceError('INVALID_REQUEST', `${name} must be given once`, { field: name });
  return value;
}

function parseOrdersQuery(query: Record<string, unknown>): OrdersQuery {
  for (const name of Object.keys(query)) {
    if (name !== 'state' && name !== 'page_size' && name !== 'cursor') {
      throw new ServiceError('INVALID_REQUEST', `unknown query parameter ${name}`, { field: name });
    }
  }
  const state = single(query, 'state');
  if (state === undefined || !Object.values<string>(ORDER_STATES).includes(state)) {
    throw new ServiceError('INVALID_REQUEST', `state is required: one of ${Object.values(ORDER_STATES).join(', ')}`, { field: 'state' });
  }
  const rawSize = single(query, 'page_size');
  const pageSize = rawSize !== undefined && /^\d{1,3}$/.test(rawSize) ? Number(rawSize) : Number.NaN;
  if (!(pageSize >= 1 && pageSize <= MAX_PAGE_SIZE)) {
    throw new ServiceError('INVALID_REQUEST', `page_size is required: an integer in 1..${MAX_PAGE_SIZE}`, { field: 'page_size' });
  }
  return { state: state as OrderState, pageSize, cursor: single(query, 'cursor') };
}

function notFound(id: string): ServiceError {
  return new ServiceError('NOT_FOUND', `customer ${id} not found`, { field: 'customer_id' });
}

/** Reads: the customer record, its orders by state, and the read-only address-change preview. */
export function registerCustomerRoutes(app: CustomersApp, s: Services): void {
  app.get<{ Params: { id: string } }>('/customers/:id', { schema: { params: idParams } }, async (request) => {
    const customer = await s.customers.find(s.pool, request.tenant, request.params.id);
    if (customer === undefined) throw notFound(request.params.id);
    return customer;
  });

  app.get<{ Params: { id: string } }>('/customers/:id/orders', { schema: { params: idParams } }, async (request) => {
    const query = parseOrdersQuery(request.query as Record<string, unknown>);
    const customer = await s.customers.find(s.pool, request.tenant, request.params.id);
    if (customer === undefined) throw notFound(request.params.id);
    const scope = { tenant: request.tenant, customerId: customer.id, state: query.state };
    const after: OrderPosition | undefined = query.cursor === undefined ? undefined : s.cursors.decode(scope, query.cursor);
    const page = await s.orders.page(s.pool, customer.id, query.state, query.pageSize, after);
    return { orders: page.orders, cursor: page.next === undefined ? null : s.cursors.encode(scope, page.next) };
  });

  app.post<{ Params: { id: string }; Body: { destination: Destination } }>(
    '/customers/:id/address-changes/preview',
    { schema: { params: idParams, body: previewBody } },
    async (request) => s.addressChanges.preview(s.pool, request.tenant, request.params.id, request.body.destination),
  );
}
