import type { GatehouseMetrics } from '@gatehouse/telemetry';
import type { CustomersApp } from './http-context.js';

/** `GET /metrics` (no tenant needed), and every request counted by route pattern, method and status. */
export function registerMetrics(app: CustomersApp, metrics: GatehouseMetrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    // The route's pattern (`/customers/:id`), never the URL: ids stay out of labels.
    metrics.httpRequest(request.routeOptions.url, request.method, reply.statusCode, reply.elapsedTime);
    done();
  });
  app.get('/metrics', { config: { tenantless: true } }, async (_request, reply) =>
    reply.type(metrics.contentType).send(await metrics.scrape()),
  );
}
