import { ServiceError } from './errors.js';
import { orderParams } from './http-schemas.js';
import type { RefundsApp } from './http-context.js';
import type { Services } from './services.js';

/** `GET /orders/:id`: the whole order for trusted callers, with its balance and its latest refunds. */
export function registerOrderRoutes(app: RefundsApp, s: Services): void {
  app.get<{ Params: { id: string } }>('/orders/:id', { schema: { params: orderParams } }, async (request) => {
    const order = await s.orders.find(s.pool, request.tenant, request.params.id);
    if (order === undefined) throw new ServiceError('NOT_FOUND', `order ${request.params.id} not found`, { field: 'order_id' });
    const refunds = await s.orders.recentRefunds(s.pool, order.order_id);
    return { ...order, refunds };
  });
}
