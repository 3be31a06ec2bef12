import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from './errors.js';
import { faultsBody } from './http-schemas.js';
import type { WriteOutcome } from './idempotent-write.js';
import type { CustomersApp } from './http-context.js';

/** `x-fault` values understood when the service runs with CUSTOMERS_FAULTS=1. */
export type Fault =
  | { readonly kind: 'drop-after-commit' }
  | { readonly kind: 'malformed-success' }
  | { readonly kind: 'status-down' }
  /** 503 before the write is even read: nothing is applied (a service that is stopping). */
  | { readonly kind: 'unavailable' }
  | { readonly kind: 'delay'; readonly ms: number };

/** The body sent by `malformed-success`: a 200 that is not JSON at all. */
export const MALFORMED_BODY = '{"ok":tru';

export interface FaultStats {
  readonly maxInFlightByTenant: Record<string, number>;
  readonly inFlightByTenant: Record<string, number>;
}

/** Fault switches and in-flight write counters of one app instance. */
export class Faults {
  statusDown = false;
  writeDelayMs = 0;
  private armed: Fault[] = [];
  private readonly assigned = new WeakMap<FastifyRequest, Fault>();
  private inFlight = new Map<string, number>();
  private maxInFlight = new Map<string, number>();

  constructor(readonly enabled: boolean) {}

  /** The request's fault, if faults are enabled and it asks for one (or one was armed for it). */
  of(request: FastifyRequest): Fault | undefined {
    if (!this.enabled) return undefined;
    const raw = request.headers['x-fault'];
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (value === undefined) return this.assigned.get(request);
    return parseFault(value);
  }

  /** Arms faults for the next writes (a test's way in when it cannot set request headers). */
  arm(faults: readonly string[]): void {
    this.armed.push(...faults.map(parseFault));
  }

  /** Gives an arriving write the next armed fault, once. */
  assign(request: FastifyRequest): void {
    const next = this.armed.shift();
    if (next !== undefined) this.assigned.set(request, next);
  }

  isStatusDown(request: FastifyRequest): boolean {
    return this.statusDown || this.of(request)?.kind === 'status-down';
  }

  enter(tenant: string): void {
    const now = (this.inFlight.get(tenant) ?? 0) + 1;
    this.inFlight.set(tenant, now);
    this.maxInFlight.set(tenant, Math.max(now, this.maxInFlight.get(tenant) ?? 0));
  }

  leave(tenant: string): void {
    const now = (this.inFlight.get(tenant) ?? 1) - 1;
    if (now <= 0) this.inFlight.delete(tenant);
    else this.inFlight.set(tenant, now);
  }

  stats(): FaultStats {
    return { maxInFlightByTenant: Object.fromEntries(this.maxInFlight), inFlightByTenant: Object.fromEntries(this.inFlight) };
  }

  /** Forgets observed maxima; requests still in flight count from now on. */
  resetStats(): FaultStats {
    this.maxInFlight = new Map(this.inFlight);
    return this.stats();
  }
}

function parseFault(value: string): Fault {
  if (value === 'drop-after-commit' || value === 'malformed-success' || value === 'status-down' || value === 'unavailable')
    return { kind: value };
  const delay = /^delay:(\d{1,6})$/.exec(value);
  if (delay?.[1] !== undefined) return { kind: 'delay', ms: Number(delay[1]) };
  throw new ServiceError('INVALID_REQUEST', `unknown x-fault "${value}"`, { field: 'x-fault' });
}

/**
 * Counts in-flight writes per tenant (from arrival until the response closes) and applies
 * `delay:<ms>` after the body is read and validated, before the handler: a client that times out
 * meanwhile leaves the write to complete without it, which is the ambiguous outcome under test.
 */
export function registerFaultHooks(app: CustomersApp, faults: Faults): void {
  if (!faults.enabled) return;
  app.addHook('onRequest', (request, reply, done) => {
    const tenant = request.headers['x-tenant'];
    if (request.routeOptions.config.write === true && typeof tenant === 'string') {
      faults.assign(request);
      faults.enter(tenant);
      reply.raw.once('close', () => faults.leave(tenant));
    }
    done();
  });
  app.addHook('preHandler', async (request) => {
    if (request.routeOptions.config.tenantless === true) return;
    const fault = faults.of(request);
    if (fault?.kind === 'unavailable' && request.routeOptions.config.write === true) {
      throw new ServiceError('UNAVAILABLE', 'the customers service is stopping; nothing was applied');
    }
    if (fault?.kind === 'delay') await sleep(fault.ms);
    if (request.routeOptions.config.write === true && faults.writeDelayMs > 0) await sleep(faults.writeDelayMs);
  });
}

/** Sends a write's outcome, unless a fault says to lose or mangle the answer after the commit. */
export async function sendWrite(
  faults: Faults,
  request: FastifyRequest,
  reply: FastifyReply,
  outcome: WriteOutcome,
): Promise<FastifyReply> {
  const fault = faults.of(request);
  if (fault?.kind === 'drop-after-commit') {
    reply.hijack();
    request.raw.socket.destroy();
    return reply;
  }
  if (fault?.kind === 'malformed-success') {
    return reply.code(200).type('application/json; charset=utf-8').send(MALFORMED_BODY);
  }
  if (outcome.replay) reply.header('idempotent-replay', 'true');
  return reply.code(outcome.httpStatus).send(outcome.body);
}

/** `/__faults` and `/__stats`: test-only routes, registered only with CUSTOMERS_FAULTS=1. */
export function registerFaultRoutes(app: CustomersApp, faults: Faults): void {
  if (!faults.enabled) return;
  const config = { tenantless: true };
  app.post<{ Body: { statusDown?: boolean; nextWrites?: string[]; writeDelayMs?: number } }>(
    '/__faults',
    { config, schema: { body: faultsBody } },
    (request, reply) => {
      if (request.body.statusDown !== undefined) faults.statusDown = request.body.statusDown;
      if (request.body.nextWrites !== undefined) faults.arm(request.body.nextWrites);
      if (request.body.writeDelayMs !== undefined) faults.writeDelayMs = request.body.writeDelayMs;
      return reply.send({ statusDown: faults.statusDown, writeDelayMs: faults.writeDelayMs });
    },
  );
  app.get('/__stats', { config }, (_request, reply) => reply.send(faults.stats()));
  app.post('/__stats/reset', { config }, (_request, reply) => reply.send(faults.resetStats()));
}
