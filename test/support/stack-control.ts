import { execFile } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
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

async function stack(...args: string[]): Promise<string> {
  const { stdout, stderr } = await run(process.execPath, [STACK_SCRIPT, ...args], { cwd: REPO_ROOT, timeout: 150_000 });
  return `${stdout}${stderr}`;
}

/** Runs `work` and puts .stack/started.json back as it was: a test runner reads it to stop what it started. */
async function keepingStartedFile<T>(work: () => Promise<T>): Promise<T> {
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

/** The only Redis this suite restarts by hand: the machine's CI instance, which keeps nothing on disk. */
const CI_REDIS = { dir: '/var/lib/redis', logfile: '/var/log/redis/ci.log', save: '', appendonly: 'no' } as const;
const CI_REDIS_ARGS = ['--daemonize', 'yes', '--bind', '127.0.0.1', '-::1', '--port', '6379', '--save', '', '--appendonly', 'no', '--dir', CI_REDIS.dir, '--logfile', CI_REDIS.logfile];

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
 * Restarts Redis with everything it held lost. Refuses (loudly) unless the server is provably one
 * this machine's user may restart: the stack script's own, or the CI instance on 127.0.0.1:6379
 * started by the documented command (its pid ours, no persistence, the CI log file).
 */
export async function ownRedis(url: string): Promise<{ readonly how: string; restart(): Promise<number> }> {
  const status = (await stackStatus())['redis'];
  if (status?.owner.startsWith('ours') === true) {
    return {
      how: 'the stack script',
      async restart() {
        const started = Date.now();
        await stack('down', 'redis');
        await keepingStartedFile(() => stack('up', 'redis'));
        return Date.now() - started;
      },
    };
  }
  const parsed = new URL(url);
  const admin = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await admin.connect();
  let facts: Record<string, string>;
  try {
    const info = await admin.info('server');
    const pid = /process_id:(\d+)/.exec(info)?.[1] ?? '';
    const port = /tcp_port:(\d+)/.exec(info)?.[1] ?? '';
    const owner = pid === '' ? undefined : await stat(`/proc/${pid}`).catch(() => undefined);
    facts = {
      host: parsed.hostname,
      port,
      pidOwner: owner === undefined ? 'not a process of this machine' : String(owner.uid),
      dir: await config(admin, 'dir'),
      logfile: await config(admin, 'logfile'),
      save: await config(admin, 'save'),
      appendonly: await config(admin, 'appendonly'),
    };
  } finally {
    admin.disconnect();
  }
  const expected = { host: '127.0.0.1', port: '6379', pidOwner: String(process.getuid?.() ?? -1), ...CI_REDIS };
  const differences = Object.entries(expected).filter(([k, v]) => facts[k] !== v);
  if (differences.length > 0) {
    throw new Error(
      `cannot restart Redis at ${url}: it is neither the stack script's nor the CI instance this test may restart ` +
        `(${differences.map(([k, v]) => `${k} is "${facts[k]}", expected "${v}"`).join('; ')})`,
    );
  }
  return {
    how: 'redis-cli shutdown nosave + the CI redis-server command',
    async restart() {
      const started = Date.now();
      // SHUTDOWN closes the connection instead of answering; redis-cli may report that.
      await run('redis-cli', ['-h', '127.0.0.1', '-p', '6379', 'shutdown', 'nosave']).catch(() => undefined);
      await pollUntil(async () => ((await answers(url)) ? undefined : true), 10_000, 'Redis to go down', 20);
      await run('redis-server', CI_REDIS_ARGS, { cwd: '/' });
      await pollUntil(async () => ((await answers(url)) ? true : undefined), 10_000, 'Redis to answer PING again', 20);
      return Date.now() - started;
    },
  };
}
