import { keyParams } from './http-schemas.js';
import type { RefundsApp } from './http-context.js';
import type { Services } from './services.js';

/**
 * The status query of the ambiguous-outcome protocol: what happened under an idempotency key.
 * `succeeded` carries the stored response, `failed` the stored error; never seen (or another
 * tenant's key) → 404 `unknown`.
 */
export function registerOperationRoutes(app: RefundsApp, s: Services): void {
  app.get<{ Params: { key: string } }>(
    '/operations/:key',
    { config: { call: 'status' }, schema: { params: keyParams } },
    async (request, reply) => {
      const { key } = request.params;
      const stored = await s.keys.find(s.pool, key);
      if (stored === undefined || stored.tenant !== request.tenant || stored.status === 'in_flight') {
        return reply.code(404).send({ key, status: 'unknown' });
      }
      const base = { key, operation: stored.operation, target_id: stored.targetId, arguments_sha256: stored.argumentsSha256 };
      if (stored.status === 'succeeded') return { ...base, status: 'succeeded', http_status: stored.httpStatus, response: stored.response };
      const response = stored.response;
      const error = typeof response === 'object' && response !== null && 'error' in response ? response.error : null;
      return { ...base, status: 'failed', http_status: stored.httpStatus, error };
    },
  );
}
