import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { refusalResponse } from '@gatehouse/sdk';
import type { CallAssertionClaims, CallAssertionVerifier, CallKind } from '@gatehouse/sdk';
import type { GatehouseMetrics, Logger } from '@gatehouse/telemetry';
import { errorBody, ServiceError } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The tenant of the call, from its verified assertion; empty on tenantless routes. */
    tenant: string;
    /** The call's verified assertion; undefined on tenantless routes. */
    call: CallAssertionClaims | undefined;
  }
  interface FastifyContextConfig {
    /** A write by business effect: counted in `/__stats`, subject to `x-fault` outcomes. */
    write?: boolean;
    /** The status query of a write's idempotency key (`/operations/:key`). */
    status?: boolean;
    /** Health, metrics and fault routes answer without a call assertion. */
    tenantless?: boolean;
  }
}

/** The fastify instance of this service: its logger is the telemetry (pino) logger. */
export type CustomersApp = FastifyInstance<Server, IncomingMessage, ServerResponse, Logger>;

const TENANT = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Every route not marked tenantless serves only a call Gatehouse made: its assertion verified
 * (signature by the executors' keys, issuer, audience, expiry, a `jti` no replica has seen) and
 * covering this request — its method, path and query, the call kind of the route, the tenant
 * `x-tenant` names (when it names one) and, for a write, its idempotency key, its approval and a
 * body that hashes to the approved arguments.
 * Checked once the body is parsed, before it is validated: a caller that proves nothing learns
 * nothing of the routes' schemas. The tenant every query is scoped to is the assertion's.
 */
export function registerCallCheck(app: CustomersApp, verifier: CallAssertionVerifier, metrics: GatehouseMetrics): void {
  app.decorateRequest('tenant', '');
  app.decorateRequest('call', undefined);
  app.addHook('preValidation', async (request, reply) => {
    const config = request.routeOptions.config;
    if (config.tenantless === true) return;
    const tenant = header(request, 'x-tenant');
    if (tenant !== undefined && !TENANT.test(tenant)) {
      throw new ServiceError('INVALID_REQUEST', 'header x-tenant, when sent, is lower-case letters, digits, - and _', {
        field: 'x-tenant',
      });
    }
    const call: CallKind = config.write === true ? 'write' : config.status === true ? 'status' : 'read';
    const check = await verifier.verify({
      authorization: header(request, 'authorization'),
      call,
      method: request.method,
      target: request.url,
      tenant,
      idempotencyKey: call === 'status' ? (request.params as { key?: string }).key : header(request, 'idempotency-key'),
      body: request.body,
    });
    if (!check.ok) {
      metrics.callRefused(check.code);
      request.log.warn({ code: check.code, route: request.routeOptions.url, method: request.method }, 'call refused');
      const refusal = refusalResponse(check);
      return reply.code(refusal.status).headers(refusal.headers).send(refusal.body);
    }
    request.tenant = check.claims.tenant;
    request.call = check.claims;
    return undefined;
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
export function registerErrorHandling(app: CustomersApp): void {
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
    if (status >= 400 && status < 500) {
      return reply.code(status).send(errorBody('INVALID_REQUEST', error.message));
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send(errorBody('INTERNAL', 'internal error'));
  });
}
