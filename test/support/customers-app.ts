// The customers service as the tests serve it: the reference app over a schema already migrated,
// reporting every call it served under a verified assertion and every call it refused. The harness
// (test/customers-harness.ts) serves it on this process's event loop, or on a thread of its own.
//
// A thread of its own is what the fault rig asks for. Its test process also runs the load, the
// policy service and the topic ledgers, and keeps its event loop busy for the whole load; Node
// accepts one new connection per turn of a busy loop (libuv accepts once per readiness), so the
// connections an executor opens when its calls rise waited seconds in the listen queue, and a
// preview's own 3 s timeout passed before the service read it. A system of record has its own
// event loop; on a thread, so has this one.
//
// On that thread Node itself runs this file, stripping its types: only erasable TypeScript here,
// and no imports of the project's test files (the thread gets what it needs in its workerData).
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import pg from 'pg';
import type { Pool } from 'pg';
import { buildApp } from '@gatehouse/customers';
import { CallAssertionVerifier } from '@gatehouse/identity';
import type { CallAssertionVerifierOptions } from '@gatehouse/identity';
import { createLogger, GatehouseMetrics } from '@gatehouse/telemetry';

/** What the service is served with: its schema (migrated and seeded), and what it checks assertions against. */
export interface ServeOptions {
  readonly schema: string;
  readonly assertions: CallAssertionVerifierOptions;
  readonly faults: boolean;
  readonly exportStepMs?: number;
}

/** A request the service served, by what its assertion said. */
export interface ServedCall {
  readonly call: string;
  readonly jti: string;
  readonly idempotencyKey: string | undefined;
  readonly tool: string;
  readonly sub: string;
  readonly actor: string;
  readonly tenant: string;
  readonly status: number;
}

/** A call the service served under a verified assertion, or one it refused, as it answered it. */
export type CallReport =
  | ({ readonly kind: 'served' } & ServedCall)
  | {
      readonly kind: 'refused';
      /** When the service refused it (ms since the epoch). */
      readonly at: number;
      readonly method: string;
      readonly url: string;
      readonly status: number;
      readonly authorization: string | undefined;
      /** Its `WWW-Authenticate` header and its body. */
      readonly challenge: unknown;
      readonly body: unknown;
    };

export interface ServedApp {
  readonly url: string;
  readonly metrics: GatehouseMetrics;
  close(): Promise<void>;
}

const logger = createLogger('customers-test', { level: process.env['LOG_LEVEL'] ?? 'error' });

/** Serves the customers app over `pool` on a random loopback port, reporting each call it answers. */
export async function serveCustomers(options: ServeOptions, pool: Pool, report: (call: CallReport) => void): Promise<ServedApp> {
  const metrics = new GatehouseMetrics();
  const app = buildApp({
    pool,
    logger,
    schema: options.schema,
    metrics,
    assertions: new CallAssertionVerifier(options.assertions),
    faults: options.faults,
    ...(options.exportStepMs === undefined ? {} : { exportStepMs: options.exportStepMs }),
  });
  // A refusal is reported as it is sent, with its body; a served call once its answer is complete.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.call === undefined && request.routeOptions.config.tenantless !== true && [401, 403, 503].includes(reply.statusCode)) {
      report({
        kind: 'refused',
        at: Date.now(),
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        authorization: request.headers.authorization,
        challenge: reply.getHeader('www-authenticate'),
        body: payload,
      });
    }
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const claims = request.call;
    if (claims !== undefined) {
      report({
        kind: 'served',
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
  return { url: `http://127.0.0.1:${address.port}`, metrics, close: () => app.close() };
}

/** What the harness sends the thread: `sync` asks for every report before the answer; `close` stops it. */
export type ToThread = { readonly kind: 'sync'; readonly id: number } | { readonly kind: 'close' };
/** What the thread sends back. */
export type FromThread =
  | { readonly kind: 'listening'; readonly url: string }
  | { readonly kind: 'report'; readonly call: CallReport }
  | { readonly kind: 'synced'; readonly id: number }
  | { readonly kind: 'closed' };

/** The workerData of the thread: the service's options and the database its pool opens. */
export interface ThreadData {
  readonly customersThread: ServeOptions & { readonly databaseUrl: string };
}

async function serveOnThisThread(data: ThreadData['customersThread']): Promise<void> {
  const port = parentPort;
  if (port === null) throw new Error('the customers thread has no parent');
  const send = (message: FromThread): void => port.postMessage(message);
  const pool = new pg.Pool({ connectionString: data.databaseUrl, max: 30 });
  const served = await serveCustomers(data, pool, (call) => send({ kind: 'report', call }));
  port.on('message', (message: ToThread) => {
    if (message.kind === 'sync') {
      // Reports were posted before this answer, and the port keeps their order.
      send({ kind: 'synced', id: message.id });
      return;
    }
    void served
      .close()
      .then(() => pool.end())
      .then(() => {
        send({ kind: 'closed' });
        port.close();
      });
  });
  send({ kind: 'listening', url: served.url });
}

const thread = (workerData as Partial<ThreadData> | null)?.customersThread;
if (!isMainThread && thread !== undefined) await serveOnThisThread(thread);
