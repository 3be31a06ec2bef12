import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { refusalResponse } from '@gatehouse/sdk';
import type { CallAssertionVerifier, CallKind } from '@gatehouse/sdk';
import type { GatehouseMetrics, Logger } from '@gatehouse/telemetry';
import { errorBody, ServiceError } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The tenant of the call, from its verified assertion; empty on tenantless routes. */
    tenant: string;
  }
  interface FastifyContextConfig {
    /** Health and metrics routes answer without a call assertion. */
    tenantless?: boolean;
    /** The kind of call a route serves (default a read). */
    call?: CallKind;
  }
}

/** The fastify instance of this service: its logger is the telemetry (pino) logger. */
export type RefundsApp = FastifyInstance<Server, IncomingMessage, ServerResponse, Logger>;

const TENANT = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Serves a route (but health and metrics) only for a call whose assertion the verifier accepts for
 * it: Gatehouse's executors signed it for this service, no replica has seen it, it is for this
 * request's method, path and query, the route's kind of call and the tenant `x-tenant` names, and a
 * write's covers its key, approval and exact body.
 * The assertion's tenant is the one every query runs under.
 */
export function registerCallCheck(app: RefundsApp, verifier: CallAssertionVerifier, metrics: GatehouseMetrics): void {
  app.decorateRequest('tenant', '');
  app.addHook('preValidation', async (request, reply) => {
    const { tenantless, call = 'read' } = request.routeOptions.config;
    if (tenantless === true) return undefined;
    const named = header(request, 'x-tenant');
    if (named !== undefined && !TENANT.test(named))
      throw new ServiceError('INVALID_REQUEST', 'header x-tenant, when sent, is lower-case letters, digits, - and _', {
        field: 'x-tenant',
      });
    const key = call === 'status' ? (request.params as { key?: string }).key : header(request, 'idempotency-key');
    const check = await verifier.verify({
      authorization: header(request, 'authorization'),
      call,
      method: request.method,
      target: request.url,
      tenant: named,
      idempotencyKey: key,
      body: request.body,
    });
    if (check.ok) {
      request.tenant = check.claims.tenant;
      return undefined;
    }
    metrics.callRefused(check.code);
    request.log.warn({ code: check.code, route: request.routeOptions.url }, 'call refused');
    const refusal = refusalResponse(check);
    return reply.code(refusal.status).headers(refusal.headers).send(refusal.body);
  });
}

/** The `Idempotency-Key` header of a write, required. */
export function idempotencyKey(request: FastifyRequest): string {
  const key = header(request, 'idempotency-key');
  if (key === undefined || !IDEMPOTENCY_KEY.test(key)) {
    throw new ServiceError('INVALID_REQUEST', 'header Idempotency-Key is required (1..200 printable ASCII characters)', {
      field: 'Idempotency-Key',
    });
  }
  return key;
}

interface AjvIssue {
  readonly instancePath: string;
  readonly message?: string;
  readonly params?: Record<string, unknown>;
}

function fieldOf(context: string | undefined, issue: AjvIssue | undefined): string {
  const path = (issue?.instancePath ?? '').split('/').filter((p) => p !== '');
  const missing = issue?.params?.['missingProperty'] ?? issue?.params?.['additionalProperty'];
  if (typeof missing === 'string') path.push(missing);
  return path.length > 0 ? path.join('.') : (context ?? 'body');
}

/** Every error leaves as `{ error: { code, message, retryable, ...details } }`. */
export function registerErrorHandling(app: RefundsApp): void {
  app.setNotFoundHandler(async (request: FastifyRequest, reply: FastifyReply) =>
    reply.code(404).send(errorBody('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0] ?? ''}`)),
  );
  app.setErrorHandler(async (error: FastifyError | ServiceError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof ServiceError) return reply.code(error.httpStatus).send(error.toBody());
    if (error.validation !== undefined) {
      const issue = error.validation[0] as AjvIssue | undefined;
      const field = fieldOf(error.validationContext, issue);
      return reply.code(400).send(errorBody('INVALID_REQUEST', `${field}: ${issue?.message ?? 'is invalid'}`, { field }));
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) return reply.code(status).send(errorBody('INVALID_REQUEST', error.message));
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send(errorBody('INTERNAL', 'internal error'));
  });
}
