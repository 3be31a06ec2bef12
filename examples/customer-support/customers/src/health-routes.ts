import { errorBody } from './errors.js';
import type { Services } from './services.js';
import type { CustomersApp } from './http-context.js';

export function registerHealthRoutes(app: CustomersApp, s: Services): void {
  const config = { tenantless: true };
  app.get('/healthz', { config }, (_request, reply) => reply.send({ status: 'up' }));
  app.get('/readyz', { config }, async (request, reply) => {
    try {
      await s.pool.query('SELECT 1');
      return { status: 'ready' };
    } catch (error) {
      request.log.warn({ err: error }, 'readiness check failed');
      return reply.code(503).send(errorBody('UNAVAILABLE', 'database is not reachable'));
    }
  });
}
