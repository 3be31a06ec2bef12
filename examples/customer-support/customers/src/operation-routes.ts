import { errorBody } from './errors.js';
import { keyParams } from './http-schemas.js';
import type { Services } from './services.js';
import type { CustomersApp } from './http-context.js';

/**
 * The status query of the ambiguous-outcome protocol: what happened under an idempotency key.
 * `succeeded` carries the stored response, `failed` the stored error; never seen → 404 `unknown`.
 */
export function registerOperationRoutes(app: CustomersApp, s: Services): void {
  app.get<{ Params: { key: string } }>(
    '/operations/:key',
    { config: { status: true }, schema: { params: keyParams } },
    async (request, reply) => {
      if (s.faults.isStatusDown(request)) {
        return reply.code(503).send(errorBody('UNAVAILABLE', 'status query is down (injected fault)'));
      }
      const { key } = request.params;
      const stored = await s.keys.find(s.pool, key);
      if (stored === undefined || stored.tenant !== request.tenant || stored.status === 'in_flight') {
        return reply.code(404).send({ key, status: 'unknown' });
      }
      const base = { key, operation: stored.operation, target_id: stored.targetId, arguments_sha256: stored.argumentsSha256 };
      if (stored.status === 'succeeded') return { ...base, status: 'succeeded', http_status: stored.httpStatus, response: stored.response };
      const { error } = stored.response as { error: unknown };
      return { ...base, status: 'failed', http_status: stored.httpStatus, error };
    },
  );
}
