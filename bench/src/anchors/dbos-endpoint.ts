// The DBOS anchor's endpoint: a plain HTTP server whose two routes each run a DBOS workflow, forked
// by startDbosAnchor (dbos.ts) with the system database's URL and a loopback port as arguments.
// `POST /read` runs a workflow of no step, `POST /write` one of a single durable step; both check
// their arguments with Ajv against the bench tools' input schema first, and run under the
// request's `idempotency-key` as workflow ID, so a repeated key answers the first run's recorded
// result without running it again. It tells its parent the port it listens on over the fork's IPC
// channel, and stops DBOS and exits on SIGTERM, or at once if the parent goes away.
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { DBOS, Error as DBOSErrors } from '@dbos-inc/dbos-sdk';
import pg from 'pg';
import { ack, checkArguments } from './governed-call.js';
import type { Ack, PayloadArguments } from './governed-call.js';

/** What the endpoint tells its parent once it serves. */
export interface EndpointListening {
  readonly kind: 'listening';
  readonly port: number;
}

/** DBOS's own default system pool size: the anchor runs DBOS as it ships. */
const SYSTEM_POOL_SIZE = 10;

/** Far above what `{ seq, payload ≤ 8 192 characters }` can take as JSON, even escaped; a larger body is refused (413). */
const MAX_BODY_BYTES = 65_536;

/** The read: a workflow with no step; DBOS still records its start, inputs and result. */
const readWorkflow = DBOS.registerWorkflow((args: PayloadArguments) => Promise.resolve(ack(args.seq)), { name: 'benchRead' });

/** The write's one durable step: it answers, and DBOS checkpoints its result before the workflow's. */
const ackStep = (args: PayloadArguments) => DBOS.runStep(() => Promise.resolve(ack(args.seq)), { name: 'ack' });

/** The write: a workflow of one durable step, whose result is the workflow's. */
const writeWorkflow = DBOS.registerWorkflow(ackStep, { name: 'benchWrite' });

const ROUTES: Readonly<Record<string, (args: PayloadArguments) => Promise<Ack>>> = { '/read': readWorkflow, '/write': writeWorkflow };

function answer(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The request's body as text, or undefined when it is larger than MAX_BODY_BYTES (read to its end all the same, to keep the connection). */
function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.once('end', () => resolve(size <= MAX_BODY_BYTES ? Buffer.concat(chunks).toString('utf8') : undefined));
    req.once('error', reject);
  });
}

/** The arguments of a call, or the refusal to answer: malformed JSON and schema violations are named, never echoed. */
function parseArguments(body: string): { readonly args: PayloadArguments } | { readonly refusal: string } {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { refusal: 'the body is not JSON' };
  }
  return checkArguments(value);
}

/** Runs the route's workflow under the idempotency key as its ID: a key already used answers its recorded result. */
async function runWorkflow(res: ServerResponse, workflow: (args: PayloadArguments) => Promise<Ack>, key: string, args: PayloadArguments) {
  try {
    const handle = await DBOS.startWorkflow(workflow, { workflowID: key })(args);
    answer(res, 200, await handle.getResult());
  } catch (error) {
    // The key names a workflow of the other route: the first call under a key owns it.
    if (error instanceof DBOSErrors.DBOSConflictingWorkflowError) {
      answer(res, 409, { error: 'IDEMPOTENCY_KEY_REUSED', message: 'the idempotency key was used on the other route' });
    } else {
      answer(res, 500, { error: 'INTERNAL', message: error instanceof Error ? error.message : String(error) });
    }
  }
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const workflow = req.method === 'POST' ? ROUTES[req.url ?? ''] : undefined;
  if (workflow === undefined) {
    req.resume();
    return answer(res, 404, { error: 'NOT_FOUND', message: 'POST /read or /write' });
  }
  const body = await readBody(req);
  const key = req.headers['idempotency-key'];
  if (typeof key !== 'string' || key === '') {
    return answer(res, 400, { error: 'IDEMPOTENCY_KEY_MISSING', message: 'the idempotency-key header is required' });
  }
  if (body === undefined) return answer(res, 413, { error: 'INVALID_ARGUMENTS', message: `the body exceeds ${MAX_BODY_BYTES} bytes` });
  const parsed = parseArguments(body);
  if ('refusal' in parsed) return answer(res, 400, { error: 'INVALID_ARGUMENTS', message: parsed.refusal });
  await runWorkflow(res, workflow, key, parsed.args);
}

/**
 * The system database's pool, handed to DBOS (its `systemDatabasePool`), with DBOS's default size
 * but every connection opened up front and never closed for idleness: the bench samples the CPU of
 * the PostgreSQL backends it reads once after start, so they must be the same ones for the run.
 */
async function openPool(databaseUrl: string): Promise<pg.Pool> {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: SYSTEM_POOL_SIZE,
    idleTimeoutMillis: 0,
    application_name: 'gatehouse_bench_dbos',
  });
  pool.on('error', (error) => process.stderr.write(`dbos endpoint: system database connection: ${error.message}\n`));
  const clients = await Promise.all(Array.from({ length: SYSTEM_POOL_SIZE }, () => pool.connect()));
  for (const client of clients) client.release();
  return pool;
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}

/** Stops serving, then DBOS (without waiting for calls in flight: the bench stops its driver first), then the pool. */
async function shutdown(server: Server, pool: pg.Pool): Promise<void> {
  server.close();
  server.closeIdleConnections();
  await DBOS.shutdown();
  server.closeAllConnections();
  await pool.end();
}

async function main(): Promise<void> {
  const [databaseUrl, portArgument] = process.argv.slice(2);
  const port = Number(portArgument);
  if (databaseUrl === undefined || !Number.isInteger(port)) throw new Error('usage: dbos-endpoint <system database URL> <port>');
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error('this entry runs as a child of the bench (child_process.fork)');
  const pool = await openPool(databaseUrl);
  // No conductor key, no OTLP and no tracing: DBOS talks to its system database and nothing else.
  // It creates its schema on launch (runMigrations); the database itself is the parent's.
  DBOS.setConfig({
    name: 'gatehouse-bench',
    systemDatabaseUrl: databaseUrl,
    systemDatabasePool: pool,
    enableOTLP: false,
    tracingEnabled: false,
    runMigrations: true,
  });
  await DBOS.launch();
  // HTTP/1.1 keep-alive with Node's defaults: the driver's agent reuses its sockets, and drops them
  // before the server's idle timeout, which the server announces in its Keep-Alive header.
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) answer(res, 500, { error: 'INTERNAL', message: error instanceof Error ? error.message : String(error) });
    });
  });
  let stopping = false;
  const stop = (code: number) => {
    if (stopping) return;
    stopping = true;
    shutdown(server, pool).then(
      () => process.exit(code),
      (error: unknown) => {
        process.stderr.write(`dbos endpoint: shutdown: ${error instanceof Error ? error.message : String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop(0));
  process.once('disconnect', () => stop(1));
  // A terminal's Ctrl-C reaches the whole group; the parent does the stopping.
  process.on('SIGINT', () => undefined);
  send({ kind: 'listening', port: await listen(server, port) } satisfies EndpointListening);
}

main().catch((error: unknown) => {
  process.stderr.write(`dbos endpoint: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
