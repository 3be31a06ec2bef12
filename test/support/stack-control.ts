import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { pollUntil } from './poll.js';

const run = promisify(execFile);
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const STACK_SCRIPT = 'deploy/local/stack.mjs';
const STARTED_FILE = fileURLToPath(new URL('../../.stack/started.json', import.meta.url));

interface ComponentStatus {
  readonly state: string;
  readonly owner: string;
  readonly address: string;
  readonly pid?: number;
}

async function stackStatus(): Promise<Record<string, ComponentStatus>> {
  // status exits 1 when a component is down; its JSON is still on stdout.
  const result = await run(process.execPath, [STACK_SCRIPT, 'status', '--json'], { cwd: REPO_ROOT }).catch(
    (error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }),
  );
  const last = result.stdout.trim().split('\n').pop() ?? '{}';
  return (JSON.parse(last) as { components?: Record<string, ComponentStatus> }).components ?? {};
}

/** Runs the stack script with `args`; resolves its stdout and stderr, rejects when it exits non-zero. */
export async function stack(...args: string[]): Promise<string> {
  const { stdout, stderr } = await run(process.execPath, [STACK_SCRIPT, ...args], { cwd: REPO_ROOT, timeout: 150_000 });
  return `${stdout}${stderr}`;
}

/** The local stack's Redis that keeps nothing on disk (`redis-volatile`), which the Redis-restart test restarts. */
const REDIS_VOLATILE_URL = process.env['REDIS_VOLATILE_URL'] || 'redis://127.0.0.1:6381';
/** The local stack's durable Redis (`redis-aof`: append-only file, fsync every second). */
const REDIS_AOF_URL = process.env['REDIS_AOF_URL'] || 'redis://127.0.0.1:6380';
/** The local stack's three-node Redis Cluster (`redis-cluster`), as REDIS_URL names a cluster. */
export const REDIS_CLUSTER_URL = process.env['REDIS_CLUSTER_URL'] || 'redis://127.0.0.1:7000?cluster=127.0.0.1:7001,127.0.0.1:7002';

/** Runs `work` and puts .stack/started.json back as it was: a test runner reads it to stop what it started. */
export async function keepingStartedFile<T>(work: () => Promise<T>): Promise<T> {
  const before = await readFile(STARTED_FILE, 'utf8').catch(() => undefined);
  try {
    return await work();
  } finally {
    if (before !== undefined) await writeFile(STARTED_FILE, before);
  }
}

/**
 * The Kafka broker of the local stack, restartable only when the stack script started it (its pid
 * file names a live broker). CI always starts its own; an external broker is refused loudly.
 */
export async function ownKafka(): Promise<{ stop(): Promise<number>; start(): Promise<number> }> {
  const kafka = (await stackStatus())['kafka'];
  if (kafka?.state !== 'up' || !kafka.owner.startsWith('ours')) {
    throw new Error(
      `cannot restart Kafka: \`node ${STACK_SCRIPT} status\` reports it ${kafka?.state ?? 'missing'} and owned by ` +
        `"${kafka?.owner ?? '?'}" at ${kafka?.address ?? '?'}; this test restarts only a broker the stack script started ` +
        '(unset KAFKA_BROKERS and run `node deploy/local/stack.mjs up kafka`, as CI does)',
    );
  }
  return {
    async stop() {
      const started = Date.now();
      const out = await stack('down', 'kafka');
      if (!/kafka\s+(stopped|killed)/.test(out)) throw new Error(`stack down kafka did not stop the broker:\n${out}`);
      return Date.now() - started;
    },
    async start() {
      const started = Date.now();
      // A broker holding thousands of partitions may miss the script's 90 s readiness window (the
      // script then stops it); a second start resumes the recovery. Never leave the suite without Kafka.
      await keepingStartedFile(() => stack('up', 'kafka').catch(() => stack('up', 'kafka')));
      const after = (await stackStatus())['kafka'];
      if (after?.state !== 'up' || !after.owner.startsWith('ours')) throw new Error(`Kafka did not come back: ${JSON.stringify(after)}`);
      return Date.now() - started;
    },
  };
}

async function config(redis: Redis, name: string): Promise<string> {
  const reply = (await redis.call('CONFIG', 'GET', name)) as string[];
  return reply[1] ?? '';
}

async function answers(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 500 });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/**
 * The local stack's `redis-volatile` (nothing on disk, like the machine's Redis), restartable with
 * everything it held lost — only when the stack script started it. The suite never stops a Redis it
 * did not start: the machine's own on 6379 may serve someone else.
 */
export async function ownVolatileRedis(url: string = REDIS_VOLATILE_URL): Promise<{ readonly url: string; restart(): Promise<number> }> {
  const status = (await stackStatus())['redis-volatile'];
  if (status?.state !== 'up' || !status.owner.startsWith('ours')) {
    throw new Error(
      `cannot restart Redis: \`node ${STACK_SCRIPT} status\` reports redis-volatile ${status?.state ?? 'missing'} and owned by ` +
        `"${status?.owner ?? '?'}" at ${status?.address ?? '?'}; this test restarts only the one the stack script started ` +
        `(unset REDIS_VOLATILE_URL and run \`node ${STACK_SCRIPT} up redis-volatile\`)`,
    );
  }
  const admin = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await admin.connect();
  try {
    const kept = { save: await config(admin, 'save'), appendonly: await config(admin, 'appendonly') };
    if (kept.save !== '' || kept.appendonly !== 'no') throw new Error(`the Redis at ${url} keeps data on disk (${JSON.stringify(kept)})`);
  } finally {
    admin.disconnect();
  }
  return {
    url,
    async restart() {
      const started = Date.now();
      await stack('down', 'redis-volatile');
      await keepingStartedFile(() => stack('up', 'redis-volatile'));
      await pollUntil(async () => ((await answers(url)) ? true : undefined), 10_000, 'Redis to answer PING again', 20);
      return Date.now() - started;
    },
  };
}

/** What a durable restart saw: the snapshot before the stop, the one after its files were loaded again, and how long writes were held up. */
interface DurableRestart<T> {
  readonly before: T;
  readonly reloaded: T;
  /** From pausing writes to the server answering on its port again. */
  readonly outageMs: number;
}

/** The local stack's durable Redis, restartable because the stack script started it. */
export interface DurableRedis {
  readonly url: string;
  /**
   * Restarts the server on its own files, proving what came back. Clients' writes are paused
   * (CLIENT PAUSE WRITE) and `snapshot` reads what the server holds; the stack script stops it
   * gracefully (SIGTERM: the append-only file is written out and fsynced); a second server with no
   * TCP port, which no client can reach, loads the same files and `snapshot` reads what came back;
   * it stops, and the stack script starts the server on its port again. Nothing can write between
   * the two snapshots, so they must be equal.
   */
  restart<T>(snapshot: (redis: Redis) => Promise<T>): Promise<DurableRestart<T>>;
}

/**
 * The `redis-aof` component of the local stack, when the stack script started it (its pid file
 * names a live server with appendonly on). Anything else is refused loudly.
 */
export async function ownAofRedis(url: string = REDIS_AOF_URL): Promise<DurableRedis> {
  const status = (await stackStatus())['redis-aof'];
  if (status?.state !== 'up' || !status.owner.startsWith('ours')) {
    throw new Error(
      `cannot restart the durable Redis: \`node ${STACK_SCRIPT} status\` reports redis-aof ${status?.state ?? 'missing'} and owned by ` +
        `"${status?.owner ?? '?'}" at ${status?.address ?? '?'}; this test restarts only the one the stack script started ` +
        `(unset REDIS_AOF_URL and run \`node ${STACK_SCRIPT} up redis-aof\`)`,
    );
  }
  const admin = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await admin.connect();
  let dir: string;
  try {
    if ((await config(admin, 'appendonly')) !== 'yes') throw new Error(`the Redis at ${url} keeps no append-only file`);
    dir = await config(admin, 'dir');
  } finally {
    admin.disconnect();
  }
  return {
    url,
    async restart<T>(snapshot: (redis: Redis) => Promise<T>): Promise<DurableRestart<T>> {
      const live = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await live.connect();
      const paused = Date.now();
      let before: T;
      try {
        await live.call('CLIENT', 'PAUSE', '60000', 'WRITE');
        before = await snapshot(live);
      } catch (error) {
        await live.call('CLIENT', 'UNPAUSE').catch(() => undefined);
        throw error;
      } finally {
        live.disconnect();
      }
      const out = await stack('down', 'redis-aof');
      if (!/redis-aof\s+stopped/.test(out)) throw new Error(`stack down redis-aof did not stop the server gracefully:\n${out}`);
      const reloaded = await loadAgain(dir, snapshot);
      await keepingStartedFile(() => stack('up', 'redis-aof'));
      await pollUntil(async () => ((await answers(url)) ? true : undefined), 60_000, 'the durable Redis to answer PING again', 20);
      return { before, reloaded, outageMs: Date.now() - paused };
    },
  };
}

/** Starts a server on `dir`'s files with no TCP port, reads it with `snapshot` over a socket, and stops it. */
async function loadAgain<T>(dir: string, snapshot: (redis: Redis) => Promise<T>): Promise<T> {
  const scratch = await mkdtemp(join(tmpdir(), 'gatehouse-aof-'));
  const socket = join(scratch, 'redis.sock');
  const server = spawn(
    'redis-server',
    // No rewrite of the append-only file while it is read: the files stay as the stop left them.
    [
      '--port',
      '0',
      '--unixsocket',
      socket,
      '--unixsocketperm',
      '700',
      '--dir',
      dir,
      '--appendonly',
      'yes',
      '--auto-aof-rewrite-percentage',
      '0',
      '--save',
      '',
      '--logfile',
      join(scratch, 'redis.log'),
    ],
    { stdio: 'ignore' },
  );
  // Never outlive the test process: two servers must not share the files.
  const orphanGuard = (): void => {
    server.kill('SIGKILL');
  };
  process.once('exit', orphanGuard);
  const exited = new Promise<void>((resolve) => {
    server.once('exit', () => resolve());
    server.once('error', () => resolve());
  }).then(() => {
    process.removeListener('exit', orphanGuard);
  });
  const client = new Redis({ path: socket, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    // PING answers LOADING until the files are read.
    await pollUntil(
      async () => {
        const probe = new Redis({ path: socket, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        probe.on('error', () => undefined);
        try {
          await probe.connect();
          return (await probe.ping()) === 'PONG' ? true : undefined;
        } catch {
          return undefined;
        } finally {
          probe.disconnect();
        }
      },
      60_000,
      'the append-only file to load in a server of its own',
      20,
    );
    await client.connect();
    return await snapshot(client);
  } finally {
    client.disconnect();
    server.kill('SIGTERM');
    await exited;
    await rm(scratch, { recursive: true, force: true });
  }
}
