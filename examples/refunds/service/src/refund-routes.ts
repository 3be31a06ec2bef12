import { argumentsSha256 } from './arguments-hash.js';
import { ServiceError } from './errors.js';
import { idempotencyKey } from './http-context.js';
import type { RefundsApp } from './http-context.js';
import { orderParams, refundBody } from './http-schemas.js';
import type { KeyClaim } from './idempotency-repository.js';
import { commitRefund } from './refund-commit.js';
import type { RefundRequest } from './refund-commit.js';
import type { Services } from './services.js';

/**
 * `POST /orders/:id/refunds` with `Idempotency-Key`: the key is stored in the refund's own
 * transaction. Same key + same body → the stored answer; same key + another body → 409
 * IDEMPOTENCY_KEY_REUSED.
 */
export function registerRefundRoutes(app: RefundsApp, s: Services): void {
  app.post<{ Params: { id: string }; Body: RefundRequest & { order_id: string } }>(
    '/orders/:id/refunds',
    { config: { call: 'write' }, schema: { params: orderParams, body: refundBody } },
    async (request, reply) => {
      // The body is the approved arguments as they are, so it names its order: it must be the path's.
      if (request.body.order_id !== request.params.id) {
        throw new ServiceError(
          'INVALID_REQUEST',
          `order_id in the body (${request.body.order_id}) is not the one in the path (${request.params.id})`,
          { field: 'order_id' },
        );
      }
      const claim: KeyClaim = {
        key: idempotencyKey(request),
        tenant: request.tenant,
        operation: 'refund',
        targetId: request.params.id,
        argumentsSha256: argumentsSha256(request.body),
      };
      const outcome = await s.runWrite(claim, (db) =>
        commitRefund(db, s.orders, request.tenant, request.params.id, request.body, claim.key),
      );
      // Ids and the body's hash, never the body.
      request.log.info(
        {
          operation: claim.operation,
          tenant: claim.tenant,
          target_id: claim.targetId,
          idempotency_key: claim.key,
          arguments_sha256: claim.argumentsSha256,
          outcome: outcome.outcome,
          http_status: outcome.httpStatus,
          replay: outcome.replay,
        },
        'write',
      );
      return reply.code(outcome.httpStatus).header('idempotent-replayed', String(outcome.replay)).send(outcome.body);
    },
  );
}
