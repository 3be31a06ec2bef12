import type { FastifyRequest } from 'fastify';
import type { Destination } from './address-change.js';
import { argumentsSha256 } from './arguments-hash.js';
import { ServiceError } from './errors.js';
import { sendWrite } from './faults.js';
import { idempotencyKey } from './http-context.js';
import { commitBody, idParams, emailBody } from './http-schemas.js';
import type { KeyClaim, Operation } from './idempotency-repository.js';
import { failure } from './idempotent-write.js';
import type { WriteOutcome } from './idempotent-write.js';
import type { OutboundEmail } from './message-repository.js';
import type { Services } from './services.js';
import type { CustomersApp } from './http-context.js';

/** The key claim of a write: the hash covers the canonical body, the claim also pins operation and target. */
export function claimOf(request: FastifyRequest, operation: Operation, targetId: string): KeyClaim {
  return {
    key: idempotencyKey(request),
    tenant: request.tenant,
    operation,
    targetId,
    argumentsSha256: argumentsSha256(request.body),
  };
}

/** One log line per write: ids and the arguments hash, never the arguments. */
export function logWrite(request: FastifyRequest, claim: KeyClaim, outcome: WriteOutcome): void {
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
}

export const WRITE = { write: true } as const;

/** A write's body names its target (it is the approved arguments): it must be the path's. */
export function sameTarget(pathId: string, bodyId: string, field: string): void {
  if (pathId !== bodyId)
    throw new ServiceError('INVALID_REQUEST', `${field} in the body (${bodyId}) is not the one in the path (${pathId})`, { field });
}

/** Keyed writes on a customer: the address-change commit and the (irreversible) email. */
export function registerWriteRoutes(app: CustomersApp, s: Services): void {
  app.post<{ Params: { id: string }; Body: { customer_id: string; expected_version: number; destination: Destination } }>(
    '/customers/:id/address-changes',
    { config: WRITE, schema: { params: idParams, body: commitBody } },
    async (request, reply) => {
      sameTarget(request.params.id, request.body.customer_id, 'customer_id');
      const claim = claimOf(request, 'address_change', request.params.id);
      const { expected_version: expected, destination } = request.body;
      const outcome = await s.runWrite(claim, (db) =>
        s.addressChanges.commit(db, request.tenant, request.params.id, expected, destination),
      );
      logWrite(request, claim, outcome);
      return sendWrite(s.faults, request, reply, outcome);
    },
  );

  app.post<{ Params: { id: string }; Body: OutboundEmail & { customer_id: string } }>(
    '/customers/:id/emails',
    { config: WRITE, schema: { params: idParams, body: emailBody } },
    async (request, reply) => {
      sameTarget(request.params.id, request.body.customer_id, 'customer_id');
      const claim = claimOf(request, 'email', request.params.id);
      const outcome = await s.runWrite(claim, async (db) => {
        const customer = await s.customers.find(db, request.tenant, request.params.id, true);
        if (customer === undefined) {
          return failure(new ServiceError('NOT_FOUND', `customer ${request.params.id} not found`, { field: 'customer_id' }));
        }
        const { subject, body, template } = request.body;
        const email: OutboundEmail = template === undefined ? { subject, body } : { subject, body, template };
        const sent = await s.messages.record(db, request.tenant, customer.id, customer.email, email, claim.key);
        return { outcome: 'succeeded', httpStatus: 200, body: sent };
      });
      logWrite(request, claim, outcome);
      return sendWrite(s.faults, request, reply, outcome);
    },
  );
}
