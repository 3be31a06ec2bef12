import { fork, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { RunningAnchor } from './anchor.js';
import { freePorts } from './governed-call.js';
import type { EndpointReady } from './restate-endpoint.js';

/**
 * The Restate anchor: a single-node `restate-server` (the npm package's binary, Restate's
 * development defaults) with its data in a fresh temporary directory, and the service endpoint of
 * restate-endpoint.ts, registered as its one deployment. Callers POST to the server's ingress, which
 * keeps the `idempotency-key` of each call and answers a repeat with the first call's result.
 * Everything listens on 127.0.0.1, with Restate's usage telemetry off (see `serverConfig`).
 */

/** From the start of the server to the first answers: RocksDB and 24 partitions open, on a small machine too. */
const START_TIMEOUT_MS = 60_000;
/** How long a process has to exit after SIGTERM before it gets SIGKILL. */
const STOP_GRACE_MS = 10_000;
/** The server's last lines of output kept for an error that says why the start failed. */
const TAIL_LINES = 20;
/** Writes sent, all at once, before the anchor counts as started: enough to reach every partition. */
const WARM_UP_CALLS = 256;

/** A process the anchor started: its exit, and the way to stop it. */
class AnchorProcess {
  readonly exited: Promise<void>;
  private reason = 'still running';

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.reason = signal === null ? `exit code ${code}` : `signal ${signal}`;
        resolve();
      });
      // A program that cannot be started emits `error` and never `exit`.
      child.once('error', (error) => {
        this.reason = error.message;
        if (child.pid === undefined) resolve();
      });
    });
    // A bench that exits without stopping the anchor takes its processes along.
    const orphaned = () => child.kill('SIGKILL');
    process.on('exit', orphaned);
    void this.exited.then(() => process.off('exit', orphaned));
  }

  /** Rejects once the process has exited: raced against each step of the start. */
  death(): Promise<never> {
    return this.exited.then(() => Promise.reject(new Error(`${this.name} exited (${this.reason})`)));
  }

  /** SIGTERM, then SIGKILL if it has not exited within STOP_GRACE_MS; resolves once it has exited. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null || this.child.pid === undefined) return;
    this.child.kill('SIGTERM');
    // A process the bench paused (SIGSTOP) keeps the SIGTERM pending until it runs again.
    this.child.kill('SIGCONT');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_GRACE_MS);
    await this.exited;
    clearTimeout(timer);
  }
}

interface Ports {
  readonly ingress: number;
  readonly admin: number;
  readonly node: number;
}

/**
 * The server's configuration: Restate's defaults but for where it listens, what it logs and what
 * it sends out. TCP on 127.0.0.1 only (no unix sockets); no web UI; warnings and errors only.
 * `disable-telemetry` stops the daily usage ping to restate.gateway.scarf.sh. The server also asks
 * api.github.com for its latest release once at start (a notice in the log, nothing more): no
 * setting turns that off, it runs in the background and never delays or fails the start, so its
 * failure to reach GitHub is merely kept out of the log (`octocrab=off`).
 */
function serverConfig(dataDir: string, ports: Ports): string {
  return [
    `base-dir = ${JSON.stringify(dataDir)}`,
    'node-name = "bench"',
    'listen-mode = "tcp"',
    `bind-address = "127.0.0.1:${ports.node}"`,
    `advertised-address = "http://127.0.0.1:${ports.node}/"`,
    'disable-telemetry = true',
    'log-filter = "warn,octocrab=off"',
    'log-format = "compact"',
    'log-disable-ansi-codes = true',
    '',
    '[admin]',
    `bind-address = "127.0.0.1:${ports.admin}"`,
    'disable-web-ui = true',
    '',
    '[ingress]',
    `bind-address = "127.0.0.1:${ports.ingress}"`,
    '',
  ].join('\n');
}

/** The server binary of @restatedev/restate-server for this platform (one of its optional dependencies). */
function serverBinary(): string {
  // Resolved from the server package's own place, where npm put its platform's binary.
  const server = createRequire(import.meta.url).resolve('@restatedev/restate-server/package.json');
  return createRequire(server).resolve(`@restatedev/restate-server-${process.platform}-${process.arch}/bin/restate-server`);
}

/** The server's output: its last lines, kept for a failed start, then passed on to stderr once it serves. */
class ServerOutput {
  readonly lines: string[] = [];
  passOn = false;

  read(stream: NodeJS.ReadableStream): void {
    createInterface({ input: stream }).on('line', (line) => {
      this.lines.push(line);
      if (this.lines.length > TAIL_LINES) this.lines.shift();
      if (this.passOn) process.stderr.write(`restate-server: ${line}\n`);
    });
  }
}

/** Starts the server on `configFile`, in an environment cleared of settings that would override the file. */
function startServer(configFile: string, output: ServerOutput): AnchorProcess {
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith('RESTATE_') || name === 'RUST_LOG') delete env[name];
  const child = spawn(serverBinary(), ['--config-file', configFile, '--no-logo'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.stdout !== null) output.read(child.stdout);
  if (child.stderr !== null) output.read(child.stderr);
  return new AnchorProcess('restate-server', child);
}

/** Forks the compiled endpoint on a port of its choosing; its stderr is the bench's, for its faults. */
function startEndpoint(): AnchorProcess {
  const entry = fileURLToPath(new URL('./restate-endpoint.js', import.meta.url));
  return new AnchorProcess('restate-endpoint', fork(entry, ['0'], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] }));
}

/** Rejects when `signal` aborts: the start's one deadline. */
function deadline(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    const fail = () => reject(new Error(`not ready within ${START_TIMEOUT_MS} ms`));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}

/** Calls `probe` every 100 ms until it answers true; a probe that throws counts as not yet. */
async function until(signal: AbortSignal, probe: (signal: AbortSignal) => Promise<boolean>): Promise<void> {
  while (!(await probe(AbortSignal.any([signal, AbortSignal.timeout(2_000)])).catch(() => false))) {
    signal.throwIfAborted();
    await sleep(100);
  }
}

/** POSTs a valid call; resolves to the HTTP status, or throws if the answer is not `{ seq, ok: true }`. */
async function call(url: string, seq: number, key: string | undefined, signal: AbortSignal): Promise<number> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key !== undefined) headers['idempotency-key'] = key;
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ seq, payload: '' }), signal });
  const text = await response.text();
  if (response.status === 200 && text !== JSON.stringify({ seq, ok: true })) throw new Error(`${url} answered ${text}`);
  return response.status;
}

/** Registers the endpoint as a deployment of the server; throws with the admin API's answer when it refuses. */
async function register(adminUrl: string, endpointPort: number, signal: AbortSignal): Promise<void> {
  const response = await fetch(`${adminUrl}/deployments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ uri: `http://127.0.0.1:${endpointPort}` }),
    signal,
  });
  if (!response.ok) throw new Error(`registering the endpoint: ${response.status} ${await response.text()}`);
}

interface Started {
  readonly server: AnchorProcess;
  readonly endpoint: AnchorProcess;
  readonly output: ServerOutput;
  readonly dir: string;
}

/**
 * Waits, step by step, for the server and the endpoint to serve: the endpoint's port, the admin
 * API's health, the registration, a read that succeeds (the new deployment has reached the
 * ingress), then WARM_UP_CALLS writes with keys of their own, so every partition has a leader
 * and the endpoint's code is warm before the bench measures anything.
 */
async function whenServing(started: Started, ports: Ports): Promise<{ readUrl: string; writeUrl: string }> {
  const signal = AbortSignal.timeout(START_TIMEOUT_MS);
  const step = <T>(work: Promise<T>) => Promise.race([work, started.server.death(), started.endpoint.death(), deadline(signal)]);
  const adminUrl = `http://127.0.0.1:${ports.admin}`;
  const readUrl = `http://127.0.0.1:${ports.ingress}/bench/read`;
  const writeUrl = `http://127.0.0.1:${ports.ingress}/bench/write`;
  const endpointPort = await step(
    new Promise<number>((resolve) => started.endpoint.child.once('message', (ready: EndpointReady) => resolve(ready.listening))),
  );
  await step(until(signal, async (probe) => (await fetch(`${adminUrl}/health`, { signal: probe })).ok));
  await step(register(adminUrl, endpointPort, signal));
  await step(until(signal, async (probe) => (await call(readUrl, 0, undefined, probe)) === 200));
  const warmUp = `anchor-warm-up-${randomUUID()}`;
  const statuses = await step(Promise.all(Array.from({ length: WARM_UP_CALLS }, (_, i) => call(writeUrl, i, `${warmUp}-${i}`, signal))));
  const failed = statuses.filter((status) => status !== 200);
  if (failed.length > 0) throw new Error(`${failed.length} of ${WARM_UP_CALLS} warm-up writes failed (HTTP ${failed[0]})`);
  return { readUrl, writeUrl };
}

/** Stops the server first (so it does not log the endpoint's going), then the endpoint, then removes the data. */
async function stopAll(started: Started): Promise<void> {
  started.output.passOn = false;
  await started.server.stop();
  await started.endpoint.stop();
  await rm(started.dir, { recursive: true, force: true });
}

/**
 * Starts the Restate anchor and resolves once it answers calls. If any step fails, what was started
 * is stopped and the error says which step, with the server's last lines of output.
 */
export async function startRestateAnchor(): Promise<RunningAnchor> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-restate-'));
  const output = new ServerOutput();
  let started: Started | undefined;
  try {
    const [ingress = 0, admin = 0, node = 0] = await freePorts(3);
    const ports: Ports = { ingress, admin, node };
    const configFile = join(dir, 'restate.toml');
    await writeFile(configFile, serverConfig(join(dir, 'data'), ports));
    started = { server: startServer(configFile, output), endpoint: startEndpoint(), output, dir };
    const { readUrl, writeUrl } = await whenServing(started, ports);
    output.passOn = true;
    const running: Started = started;
    let stopping: Promise<void> | undefined;
    return {
      name: 'restate',
      readUrl,
      writeUrl,
      pids: [running.server.child.pid, running.endpoint.child.pid].filter((pid) => pid !== undefined),
      stop: () => (stopping ??= stopAll(running)),
    };
  } catch (error) {
    if (started === undefined) await rm(dir, { recursive: true, force: true });
    else await stopAll(started);
    const tail = output.lines.length > 0 ? `\nrestate-server's last lines:\n${output.lines.join('\n')}` : '';
    throw new Error(`the Restate anchor did not start: ${error instanceof Error ? error.message : String(error)}${tail}`, { cause: error });
  }
}
