import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Pool } from 'pg';
import { buildApp, ensureDatabase, migrate, seedIfEmpty, tablesIn } from '@gatehouse/customers';
import type { Tables } from '@gatehouse/customers';
import { requestTarget } from '@gatehouse/identity';
import type { CallFacts } from '@gatehouse/identity';
import { createLogger, GatehouseMetrics } from '@gatehouse/telemetry';
import { decodeJwt } from 'jose';
import { testAssertion, testCallVerifier } from './support/signing.js';

export const DATABASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/gatehouse';
const logger = createLogger('customers-test', { level: process.env['LOG_LEVEL'] ?? 'error' });

export interface TestServiceOptions {
  readonly faults?: boolean;
  /** Where the service reads the executors' keys (a JWKS URL); default the test key set itself. */
  readonly assertionKeys?: string;
  readonly exportStepMs?: number;
}

interface Reply<T> {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The parsed JSON body, as the caller expects it to be (undefined when not JSON). */
  readonly body: T;
}

export interface CallOptions {
  /** The `x-tenant` header (default `acme`; null sends none). */
  readonly tenant?: string | null;
  /**
   * The call assertion: by default one the test executors' key signs for exactly this request, as
   * Gatehouse would (a status query for `/operations/…`, a write for a POST with a key, else a read);
   * facts to change in it; a raw `Authorization` value; or null for none.
   */
  readonly assertion?: Partial<CallFacts> | string | null;
  readonly key?: string;
  readonly body?: unknown;
  readonly fault?: string;
  readonly signal?: AbortSignal;
}

/** A customers service listening on a random port over its own, freshly seeded PostgreSQL schema. */
export interface TestService {
  readonly url: string;
  readonly schema: string;
  readonly t: Tables;
  /** A pool for asserting on rows directly. */
  readonly db: Pool;
  call<T = unknown>(method: string, path: string, options?: CallOptions): Promise<Reply<T>>;
  /** The service's metrics (call refusals among them). */
  readonly metrics: GatehouseMetrics;
  /** Every request the service served under a verified assertion, in order. */
  readonly served: readonly ServedCall[];
  /** Every request it refused for its assertion (or the lack of one). */
  readonly refused: readonly RefusedCall[];
  close(): Promise<void>;
}

/** A request the service served, by what its assertion said. */
interface ServedCall {
  readonly call: string;
  readonly jti: string;
  readonly idempotencyKey: string | undefined;
  readonly tool: string;
  readonly sub: string;
  readonly actor: string;
  readonly tenant: string;
  readonly status: number;
}

/** A request the service refused, with its refusal code and what its (unverified) assertion claimed. */
export interface RefusedCall {
  /** When the service refused it (ms since the epoch). */
  readonly at: number;
  readonly method: string;
  readonly url: string;
  readonly status: number;
  /** The refusal code: from the `WWW-Authenticate` header of a 401, else from the body (else the status). */
  readonly code: string;
  readonly jti: string | undefined;
  readonly commandId: string | undefined;
  /** How far past the assertion's `exp` the service saw the request (ms; negative: before it). */
  readonly pastExpiryMs: number | undefined;
  /** How long after the assertion's `iat` the service saw the request (ms). */
  readonly sinceIssuedMs: number | undefined;
}

/** What the service answered a refused request: its challenge header and its body. */
interface Answer {
  readonly challenge: unknown;
  readonly body: unknown;
}

/** The `error.code` of a JSON refusal body, if it is one. */
function codeIn(body: unknown): string | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    const code: unknown = (JSON.parse(body) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

/** What a refused request was and claimed: the assertion is decoded, not trusted. */
function refusedCall(method: string, url: string, status: number, authorization: string | undefined, answer: Answer): RefusedCall {
  const code =
    /error_description="([A-Z_]+)"/.exec(typeof answer.challenge === 'string' ? answer.challenge : '')?.[1] ??
    codeIn(answer.body) ??
    String(status);
  let claims: Record<string, unknown> = {};
  try {
    claims = decodeJwt(authorization?.replace(/^Bearer /, '') ?? '');
  } catch {
    // Not a JWT: nothing to tell.
  }
  const text = (name: string): string | undefined => (typeof claims[name] === 'string' ? claims[name] : undefined);
  const exp = typeof claims['exp'] === 'number' ? claims['exp'] : undefined;
  const iat = typeof claims['iat'] === 'number' ? claims['iat'] : undefined;
  return {
    at: Date.now(),
    method,
    url,
    status,
    code,
    jti: text('jti'),
    commandId: text('command_id'),
    pastExpiryMs: exp === undefined ? undefined : Date.now() - exp * 1000,
    sinceIssuedMs: iat === undefined ? undefined : Date.now() - iat * 1000,
  };
}

/** The customers service's audience, as the reference pack and the service default it. */
const CUSTOMERS_AUDIENCE = 'customers';

/** A call assertion for `method path` (path and query) as an executor would mint it, with `facts` changed. */
export async function assertionFor(method: string, path: string, o: CallOptions, facts: Partial<CallFacts> = {}): Promise<string> {
  const status = path.startsWith('/operations/');
  const write = !status && method === 'POST' && o.key !== undefined;
  return testAssertion(CUSTOMERS_AUDIENCE, {
    call: status ? 'status' : write ? 'write' : 'read',
    method,
    // As the request goes on the wire: the WHATWG URL's serialization of the path and query.
    target: requestTarget(new URL(path, 'http://customers.test')),
    tenant: o.tenant ?? 'acme',
    ...(status ? { idempotencyKey: decodeURIComponent(path.slice('/operations/'.length)) } : {}),
    ...(write ? { idempotencyKey: o.key ?? null, body: o.body } : {}),
    ...facts,
  });
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  await ensureDatabase(DATABASE_URL);
  const schema = `t_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const db = new pg.Pool({ connectionString: DATABASE_URL, max: 30 });
  await migrate(db, schema);
  await seedIfEmpty(db, schema);
  const metrics = new GatehouseMetrics();
  const app = buildApp({
    pool: db,
    logger,
    schema,
    metrics,
    assertions: testCallVerifier(CUSTOMERS_AUDIENCE, options.assertionKeys === undefined ? {} : { keys: options.assertionKeys }),
    ...(options.faults === undefined ? {} : { faults: options.faults }),
    ...(options.exportStepMs === undefined ? {} : { exportStepMs: options.exportStepMs }),
  });
  const served: ServedCall[] = [];
  const refused: RefusedCall[] = [];
  // A refusal is recorded as it is sent, with its body; a served call once its answer is complete.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.call === undefined && request.routeOptions.config.tenantless !== true && [401, 403, 503].includes(reply.statusCode)) {
      const answer = { challenge: reply.getHeader('www-authenticate'), body: payload };
      refused.push(refusedCall(request.method, request.url, reply.statusCode, request.headers.authorization, answer));
    }
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const claims = request.call;
    if (claims !== undefined) {
      served.push({
        call: claims.call,
        jti: claims.jti,
        idempotencyKey: claims.idempotency_key,
        tool: claims.tool,
        sub: claims.sub,
        actor: claims.act.sub,
        tenant: claims.tenant,
        status: reply.statusCode,
      });
    }
    done();
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('service did not bind a TCP port');
  const url = `http://127.0.0.1:${address.port}`;
  return {
    url,
    schema,
    t: tablesIn(schema),
    db,
    metrics,
    served,
    refused,
    async call<T>(method: string, path: string, o: CallOptions = {}): Promise<Reply<T>> {
      const headers: Record<string, string> = {};
      if (typeof o.assertion === 'string') headers['authorization'] = o.assertion;
      else if (o.assertion !== null) headers['authorization'] = `Bearer ${await assertionFor(method, path, o, o.assertion)}`;
      if (o.tenant !== null) headers['x-tenant'] = o.tenant ?? 'acme';
      if (o.key !== undefined) headers['idempotency-key'] = o.key;
      if (o.fault !== undefined) headers['x-fault'] = o.fault;
      if (o.body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(`${url}${path}`, {
        method,
        headers,
        ...(o.body === undefined ? {} : { body: JSON.stringify(o.body) }),
        ...(o.signal === undefined ? {} : { signal: o.signal }),
      });
      const text = await response.text();
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        body = undefined;
      }
      return { status: response.status, headers: response.headers, text, body: body as T };
    },
    async close() {
      await app.close();
      await db.query(`DROP SCHEMA IF EXISTS ${tablesIn(schema).schema} CASCADE`);
      await db.end();
    },
  };
}

/** A fresh idempotency key. */
export function newKey(label = 'k'): string {
  return `${label}-${randomUUID()}`;
}

/** Polls `check` until it returns a value other than undefined; rejects after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
