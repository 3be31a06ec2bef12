// The DBOS anchor: DBOS Transact as a library in an endpoint process of its own (dbos-endpoint.ts),
// its system database a fresh database on the machine's PostgreSQL. Nothing else runs: no
// conductor, no OTLP export, and DBOS 5 has no admin server.
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { RunningAnchor } from './anchor.js';
import type { EndpointListening } from './dbos-endpoint.js';
import { freePorts } from './governed-call.js';

/** Where the system database goes when BENCH_DBOS_DATABASE_URL does not say. */
const DATABASE_NAME = 'gatehouse_bench_dbos';
const LOCAL_SERVER = 'postgres://postgres@127.0.0.1:5432/';

/** Launch creates DBOS's schema in the fresh database: seconds, not minutes. */
const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 10_000;
/** The endpoint's last stderr lines kept for a failure's report, from at most its last STDERR_BYTES characters. */
const STDERR_LINES = 20;
const STDERR_BYTES = 8_192;

/**
 * The system database's URL: BENCH_DBOS_DATABASE_URL, else the server of DATABASE_URL (the stack's
 * PostgreSQL) or the local one, with a database of the anchor's own. It is dropped and re-created
 * at every start, so it must never be a database anything else uses.
 */
function databaseUrlFromEnv(): URL {
  const explicit = process.env['BENCH_DBOS_DATABASE_URL'];
  if (explicit !== undefined) return new URL(explicit);
  const url = new URL(process.env['DATABASE_URL'] ?? LOCAL_SERVER);
  url.pathname = `/${DATABASE_NAME}`;
  return url;
}

const nameIn = (url: URL) => decodeURIComponent(url.pathname.replace(/^\//, ''));

/** The anchor's database name; never the server's `postgres` nor Gatehouse's own (DATABASE_URL's), since start drops it. */
function databaseNameOf(url: URL): string {
  const name = nameIn(url);
  const gatehouse = process.env['DATABASE_URL'];
  if (name === '' || name === 'postgres' || (gatehouse !== undefined && nameIn(new URL(gatehouse)) === name)) {
    throw new Error(`the DBOS anchor needs a database of its own, not '${name}'`);
  }
  return name;
}

/** Runs `work` on a connection to the server's `postgres` database, which is never the anchor's. */
async function onServer<T>(databaseUrl: URL, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Drops the database if a crashed run left it (its sessions ended by FORCE), then creates it empty. */
async function recreateDatabase(databaseUrl: URL): Promise<void> {
  const name = pg.escapeIdentifier(databaseNameOf(databaseUrl));
  await onServer(databaseUrl, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${name}`);
  });
}

async function dropDatabase(databaseUrl: URL): Promise<void> {
  const name = pg.escapeIdentifier(databaseNameOf(databaseUrl));
  await onServer(databaseUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

/**
 * The PostgreSQL backends serving the database: the endpoint's system pool, whose connections it
 * opens before it says it listens and never closes for idleness. Read once, after start: a
 * connection PostgreSQL or the network ended later would be replaced by a backend not in the list.
 */
async function backendPids(databaseUrl: URL): Promise<number[]> {
  const name = databaseNameOf(databaseUrl);
  const { rows } = await onServer(databaseUrl, (client) =>
    client.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend' ORDER BY pid", [
      name,
    ]),
  );
  return rows.map((row) => row.pid);
}

/** The forked endpoint: its port once it listens, its exit, the tail of its stderr. */
class Endpoint {
  readonly ready: Promise<number>;
  readonly exited: Promise<void>;
  private running = true;
  private stderr = '';
  private readonly child: ChildProcess;

  constructor(databaseUrl: URL, port: number) {
    // DBOS reads DBOS__CLOUD, its conductor's key and URL and more from the environment: none of them reach it.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('DBOS')));
    this.child = fork(fileURLToPath(new URL('./dbos-endpoint.js', import.meta.url)), [databaseUrl.toString(), String(port)], {
      env,
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    this.child.stderr?.setEncoding('utf8');
    this.child.stderr?.on('data', (text: string) => {
      this.stderr = (this.stderr + text).slice(-STDERR_BYTES);
    });
    // 'close' comes after 'exit' once stderr is read to its end, so a failure's report has its last lines.
    this.exited = new Promise((resolve) =>
      this.child.once('close', () => {
        this.running = false;
        resolve();
      }),
    );
    this.ready = new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the endpoint did not listen within ${READY_TIMEOUT_MS / 1000} s`)),
        READY_TIMEOUT_MS,
      );
      this.child.once('message', (message: EndpointListening) => {
        clearTimeout(timer);
        resolve(message.port);
      });
      this.child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      this.child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`the endpoint exited (${signal ?? `code ${code}`})`));
      });
    });
    // Rejected when the endpoint exits after serving too: nobody waits on it by then.
    this.ready.catch(() => undefined);
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error('the endpoint did not start');
    return this.child.pid;
  }

  get stderrTail(): readonly string[] {
    return this.stderr
      .split('\n')
      .filter((line) => line !== '')
      .slice(-STDERR_LINES);
  }

  /** SIGTERM (after SIGCONT, should the bench have paused it), SIGKILL if it has not exited within STOP_GRACE_MS. */
  async stop(): Promise<void> {
    if (!this.running || this.child.pid === undefined) return;
    this.child.kill('SIGCONT');
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_GRACE_MS);
    await this.exited;
    clearTimeout(timer);
  }
}

function causeOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Starts the DBOS anchor on a fresh system database. Its pids are the endpoint's and those of the
 * PostgreSQL backends serving it (read once after start). If anything fails, what was started is
 * stopped, the database dropped, and the error names the cause with the endpoint's last stderr lines.
 */
export async function startDbosAnchor(): Promise<RunningAnchor> {
  const databaseUrl = databaseUrlFromEnv();
  const name = databaseNameOf(databaseUrl);
  try {
    await recreateDatabase(databaseUrl);
  } catch (error) {
    throw new Error(`the DBOS anchor could not create its system database ${name}: ${causeOf(error)}`);
  }
  const endpoint = new Endpoint(databaseUrl, (await freePorts(1))[0] ?? 0);
  try {
    const port = await endpoint.ready;
    const backends = await backendPids(databaseUrl);
    let stopped: Promise<void> | undefined;
    return {
      name: 'dbos',
      readUrl: `http://127.0.0.1:${port}/read`,
      writeUrl: `http://127.0.0.1:${port}/write`,
      pids: [endpoint.pid, ...backends],
      stop: () => (stopped ??= endpoint.stop().then(() => dropDatabase(databaseUrl))),
    };
  } catch (error) {
    await endpoint.stop();
    await dropDatabase(databaseUrl).catch(() => undefined);
    const stderr = endpoint.stderrTail.length === 0 ? '' : `\n${endpoint.stderrTail.join('\n')}`;
    throw new Error(`the DBOS anchor did not start: ${causeOf(error)}${stderr}`);
  }
}
