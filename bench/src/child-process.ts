import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * The bench's other processes (a driver, a policy service, an executor) and how the bench main
 * process talks to them: requests over the IPC channel of `fork`, each answered once by id.
 */

/** What a process says about itself at an instant: its CPU and the Redis commands it has sent so far. */
export interface ProcessSample {
  /** `process.cpuUsage()`, measured inside the process. */
  readonly cpu: NodeJS.CpuUsage;
  /** Commands its services handed to their Redis connection, by name (an EVALSHA is one). */
  readonly redisSent: Readonly<Record<string, number>>;
  /** Writes of that connection: a lone command or one pipeline each. */
  readonly redisBatches: number;
}

interface Request {
  readonly id: number;
  readonly op: string;
  readonly body?: unknown;
}

type Response =
  { readonly id: number; readonly ok: true; readonly value: unknown } | { readonly id: number; readonly ok: false; readonly error: string };

/**
 * The session timeout of every consumer group member in a stopped setup's processes (the services'
 * and the driver's): a setup waits, stopped (SIGSTOP), while the others' arms run, up to a round
 * of the bench, and keeps its partitions because the broker has not given up on it by then.
 */
export const PAUSE_SESSION_TIMEOUT_MS = 600_000;

const STOP_GRACE_MS = 10_000;

/** The main process's handle on one child: ask it things, sample it, stop it. */
export class Child {
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private next = 0;
  private exited = false;
  private readonly process: ChildProcess;

  /**
   * Forks `entry` (a file of bench/dist) with `env` added to this process's environment (a value
   * of undefined removes the variable). Its stdout is dropped; stderr is kept for crash reports.
   */
  constructor(
    readonly name: string,
    entry: string,
    env: Readonly<Record<string, string | undefined>> = {},
  ) {
    const merged: NodeJS.ProcessEnv = { ...process.env };
    for (const [key, value] of Object.entries(env)) {
      if (value === undefined) delete merged[key];
      else merged[key] = value;
    }
    // BENCH_CPU_PROF_DIR: every child writes a V8 CPU profile there when it exits (one file per process).
    const profileDir = process.env['BENCH_CPU_PROF_DIR'];
    const execArgv = profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`];
    this.process = fork(fileURLToPath(new URL(entry, import.meta.url)), [], {
      env: merged,
      execArgv,
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    this.process.on('message', (response: Response) => {
      const waiter = this.waiting.get(response.id);
      this.waiting.delete(response.id);
      if (response.ok) waiter?.resolve(response.value);
      else waiter?.reject(new Error(`${this.name}: ${response.error}`));
    });
    // A fork that fails, or a message that cannot be sent: the waiters hear it, the bench goes on to its clean-up.
    this.process.on('error', (error) => {
      for (const waiter of this.waiting.values()) waiter.reject(new Error(`${this.name}: ${error.message}`));
      this.waiting.clear();
    });
    this.process.once('exit', (code, signal) => {
      this.exited = true;
      for (const waiter of this.waiting.values()) waiter.reject(new Error(`${this.name} exited (${signal ?? `code ${code}`})`));
      this.waiting.clear();
    });
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  /**
   * Stops the process where it stands (SIGSTOP) or lets it go on (SIGCONT): a stopped process
   * costs the machine nothing while another setup is measured. Its group memberships outlive the
   * stop because the bench's consumers run with PAUSE_SESSION_TIMEOUT_MS.
   */
  signal(signal: 'SIGSTOP' | 'SIGCONT'): void {
    if (!this.exited) this.process.kill(signal);
  }

  ask(op: string, body?: unknown): Promise<unknown> {
    if (this.exited) return Promise.reject(new Error(`${this.name} has exited`));
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.process.send({ id, op, body } satisfies Request);
    });
  }

  sample(): Promise<ProcessSample> {
    return this.ask('sample') as Promise<ProcessSample>;
  }

  /** Asks the child to stop its work and exit; SIGKILL if it has not exited within STOP_GRACE_MS. */
  async stop(): Promise<void> {
    if (this.exited) return;
    const exit = new Promise<void>((resolve) => this.process.once('exit', () => resolve()));
    const timer = setTimeout(() => this.process.kill('SIGKILL'), STOP_GRACE_MS);
    this.ask('stop').catch(() => undefined);
    await exit;
    clearTimeout(timer);
  }
}

/**
 * The child's side: answers the parent's requests with `serve`. `sample` and `stop` are answered
 * here (`onStop` first stops the child's work); the child exits after answering `stop`, and at once
 * if the parent goes away, so no process outlives the bench.
 */
export function serveParent(
  serve: (op: string, body: unknown) => Promise<unknown>,
  redisSent: () => Omit<ProcessSample, 'cpu'>,
  onStop: () => Promise<void>,
): void {
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error('this entry runs as a child of the bench (child_process.fork)');
  process.on('disconnect', () => process.exit(1));
  // The parent stops children with a request; a terminal's Ctrl-C reaches the whole group, and the
  // parent's finally does the stopping.
  process.on('SIGINT', () => undefined);
  const answer = (response: Response, then?: () => void) => send(response, undefined, {}, () => then?.());
  process.on('message', (request: Request) => {
    const work: Promise<unknown> =
      request.op === 'sample'
        ? Promise.resolve({ cpu: process.cpuUsage(), ...redisSent() } satisfies ProcessSample)
        : request.op === 'stop'
          ? onStop()
          : serve(request.op, request.body);
    work.then(
      (value) => answer({ id: request.id, ok: true, value: value ?? null }, request.op === 'stop' ? () => process.exit(0) : undefined),
      (error: unknown) =>
        answer(
          { id: request.id, ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) },
          request.op === 'stop' ? () => process.exit(1) : undefined,
        ),
    );
  });
}
