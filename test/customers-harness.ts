import { randomUUID } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import type { Pool } from 'pg';
import { ensureDatabase, migrate, seedIfEmpty, tablesIn } from '@gatehouse/customers';
import type { Tables } from '@gatehouse/customers';
import { requestTarget } from '@gatehouse/identity';
import type { CallFacts } from '@gatehouse/identity';
import { decodeJwt } from 'jose';
import { serveCustomers } from './support/customers-app.js';
import type { CallReport, FromThread, ServedCall, ServeOptions, ThreadData, ToThread } from './support/customers-app.js';
import { TEST_ASSERTION_ISSUER, TEST_ASSERTION_JWKS, testAssertion } from './support/signing.js';

export const DATABASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/gatehouse';

export interface TestServiceOptions {
  readonly faults?: boolean;
  /** Where the service reads the executors' keys (a JWKS URL); default the test key set itself. */
  readonly assertionKeys?: string;
  readonly exportStepMs?: number;
  /**
   * Serve it on a thread of its own, as a system of record has its own event loop, rather than on
   * this process's, which a load through the whole stack keeps busy (see support/customers-app.ts).
   */
  readonly thread?: boolean;
}

/** The service's metrics registry, as the tests read it. */
interface ServiceMetrics {
  scrape(): Promise<string>;
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
  readonly metrics: ServiceMetrics;
  /** Every request the service served under a verified assertion, in order. */
  readonly served: readonly ServedCall[];
  /** Every request it refused for its assertion (or the lack of one). */
  readonly refused: readonly RefusedCall[];
  /** Resolves once `served` and `refused` hold every call the service has answered so far. */
  settled(): Promise<void>;
  close(): Promise<void>;
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
function refusedCall(report: Extract<CallReport, { kind: 'refused' }>): RefusedCall {
  const { at, method, url, status, authorization, challenge, body } = report;
  const code = /error_description="([A-Z_]+)"/.exec(typeof challenge === 'string' ? challenge : '')?.[1] ?? codeIn(body) ?? String(status);
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
    at,
    method,
    url,
    status,
    code,
    jti: text('jti'),
    commandId: text('command_id'),
    pastExpiryMs: exp === undefined ? undefined : at - exp * 1000,
    sinceIssuedMs: iat === undefined ? undefined : at - iat * 1000,
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
  const serve: ServeOptions = {
    schema,
    assertions: { issuer: TEST_ASSERTION_ISSUER, audience: CUSTOMERS_AUDIENCE, keys: options.assertionKeys ?? TEST_ASSERTION_JWKS },
    faults: options.faults ?? false,
    ...(options.exportStepMs === undefined ? {} : { exportStepMs: options.exportStepMs }),
  };
  const served: ServedCall[] = [];
  const refused: RefusedCall[] = [];
  const record = (report: CallReport): void => {
    if (report.kind === 'served') served.push(report);
    else refused.push(refusedCall(report));
  };
  let running: Running;
  try {
    running = options.thread === true ? await onItsOwnThread(serve, record) : await inThisProcess(serve, db, record);
  } catch (error) {
    await db.end();
    throw error;
  }
  const { url } = running;
  return {
    url,
    schema,
    t: tablesIn(schema),
    db,
    metrics: running.metrics,
    served,
    refused,
    settled: () => running.settled(),
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
      await running.close();
      await db.query(`DROP SCHEMA IF EXISTS ${tablesIn(schema).schema} CASCADE`);
      await db.end();
    },
  };
}

/** The service as it runs, wherever it runs. */
interface Running {
  readonly url: string;
  readonly metrics: ServiceMetrics;
  settled(): Promise<void>;
  close(): Promise<void>;
}

async function inThisProcess(serve: ServeOptions, db: Pool, record: (report: CallReport) => void): Promise<Running> {
  const app = await serveCustomers(serve, db, record);
  // Reports are made on this event loop as calls are answered: nothing is ever still on its way.
  return { url: app.url, metrics: app.metrics, settled: () => Promise.resolve(), close: () => app.close() };
}

/** The thread's module (Node runs it as it is, stripping its types). */
const THREAD = new URL('./support/customers-app.ts', import.meta.url);

async function onItsOwnThread(serve: ServeOptions, record: (report: CallReport) => void): Promise<Running> {
  const data: ThreadData = { customersThread: { ...serve, databaseUrl: DATABASE_URL } };
  const worker = new Worker(THREAD, { workerData: data });
  // What waits on the thread's answer: a sync by its id, the close by -1.
  const waiting = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  let nextSync = 0;
  let gone: Error | undefined;
  const listening = new Promise<string>((resolve, reject) => {
    worker.on('message', (message: FromThread) => {
      if (message.kind === 'report') record(message.call);
      else if (message.kind === 'listening') resolve(message.url);
      else waiting.get(message.kind === 'synced' ? message.id : -1)?.resolve();
    });
    const end = (error: Error): void => {
      gone ??= error;
      reject(gone);
      for (const waiter of waiting.values()) waiter.reject(gone);
    };
    worker.on('error', (error: Error) => end(new Error(`the customers thread failed: ${error.message}`)));
    worker.on('exit', (code) => end(new Error(`the customers thread exited (${code})`)));
  });
  const url = await listening.catch(async (error: unknown) => {
    await worker.terminate();
    throw error;
  });
  /** Sends `message` and resolves on the thread's answer to it; rejects once the thread is gone. */
  const ask = (message: ToThread, id: number): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      if (gone !== undefined) return reject(gone);
      const done = (settle: () => void): void => {
        waiting.delete(id);
        settle();
      };
      waiting.set(id, { resolve: () => done(resolve), reject: (error) => done(() => reject(error)) });
      worker.postMessage(message);
    });
  return {
    url,
    // The thread's registry, as its /metrics serves it.
    metrics: { scrape: async () => (await fetch(`${url}/metrics`)).text() },
    settled() {
      const id = nextSync++;
      return ask({ kind: 'sync', id }, id);
    },
    async close() {
      await ask({ kind: 'close' }, -1);
      await worker.terminate();
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
