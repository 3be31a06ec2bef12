import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '@gatehouse/telemetry';
import { errorBody, ServiceError } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller's tenant from `x-tenant`; empty on tenantless routes. */
    tenant: string;
  }
  interface FastifyContextConfig {
    /** A write by business effect: counted in `/__stats`, subject to `x-fault` outcomes. */
    write?: boolean;
    /** Health and fault routes answer without `x-tenant`. */
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

/** Requires `x-tenant` on every route not marked tenantless. */
export function registerTenantCheck(app: CustomersApp): void {
  app.decorateRequest('tenant', '');
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.routeOptions.config.tenantless === true) return done();
    const tenant = header(request, 'x-tenant');
    if (tenant === undefined || !TENANT.test(tenant)) {
      return done(new ServiceError('INVALID_REQUEST', 'header x-tenant is required (lower-case letters, digits, - and _)', { field: 'x-tenant' }));
    }
    request.tenant = tenant;
    done();
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
