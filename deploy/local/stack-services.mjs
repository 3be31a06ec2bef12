// Redis and PostgreSQL components of the local stack. These are normally already running as
// system services; we only start them (redis-server / pg_ctlcluster) when they are down and
// installed, and we only ever stop what we started ourselves.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  LOGS,
  PIDS,
  STACK,
  StackError,
  run,
  onPath,
  waitFor,
  tail,
  readPid,
  writePid,
  terminate,
  tcpProbe,
  hostPort,
} from './stack-lib.mjs';

// ---------------------------------------------------------------- Redis

const redisAddr = () => hostPort(redis.address(), 6379);

async function redisProbe() {
  const { host, port } = redisAddr();
  const reply = await tcpProbe(host, port, { send: 'PING\r\n' });
  return typeof reply === 'string' && (reply.startsWith('+PONG') || reply.startsWith('-NOAUTH'));
}

async function redisStart() {
  const { port } = redisAddr();
  if (!(await onPath('redis-server'))) {
    throw new StackError(`Redis is not running on 127.0.0.1:${port} and redis-server is not installed; install it or set REDIS_URL.`);
  }
  const log = join(LOGS, 'redis.log');
  const res = await run(
    'redis-server',
    [
      '--daemonize',
      'yes',
      '--bind',
      '127.0.0.1',
      '--port',
      String(port),
      '--save',
      '',
      '--appendonly',
      'no',
      '--pidfile',
      join(PIDS, 'redis.pid'),
      '--logfile',
      log,
    ],
    { cwd: STACK },
  );
  if (res.code !== 0) throw new StackError(`redis-server failed to start:\n${res.stderr.trim()}\n${await tail(log)}`);
  try {
    await waitFor(redisProbe, { timeoutMs: 10_000, intervalMs: 100 });
    await waitFor(async () => (await readPid('redis')) !== null, { timeoutMs: 5000, intervalMs: 100 });
  } catch (err) {
    throw new StackError(`Redis did not answer PING on 127.0.0.1:${port}: ${err.message}\n${await tail(log)}`);
  }
  return { pid: await readPid('redis') };
}

export const redis = {
  name: 'redis',
  version: '-',
  envVar: 'REDIS_URL',
  pattern: 'redis-server',
  address: () => process.env.REDIS_URL || 'redis://127.0.0.1:6379',
  probe: () => redisProbe().catch(() => false),
  start: redisStart,
  waitRunning: () => waitFor(redisProbe, { timeoutMs: 10_000, intervalMs: 200 }),
};

// ---------------------------------------------------------------- PostgreSQL

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/gatehouse';
const pgAddr = () => hostPort(postgres.address(), 5432);
const pgProbe = async () => (await tcpProbe(pgAddr().host, pgAddr().port)) === true;

/** The Debian cluster version to manage: the highest in /etc/postgresql (cluster name `main`). */
async function clusterVersion() {
  const versions = (await readdir('/etc/postgresql').catch(() => [])).filter((v) => /^\d+(\.\d+)?$/.test(v));
  versions.sort((a, b) => Number(b) - Number(a));
  return versions[0] ?? null;
}

const pgctl = async (action) => run('pg_ctlcluster', ['--skip-systemctl-redirect', await clusterVersion(), 'main', action]);

async function pgStart() {
  const { port } = pgAddr();
  if (!(await onPath('pg_ctlcluster')) || !(await clusterVersion())) {
    throw new StackError(`PostgreSQL is not running on 127.0.0.1:${port} and no server is installed; install it or set DATABASE_URL.`);
  }
  const res = await pgctl('start');
  if (res.code !== 0) throw new StackError(`pg_ctlcluster start failed:\n${(res.stdout + res.stderr).trim()}`);
  await waitFor(pgProbe, { timeoutMs: 30_000, intervalMs: 200 });
  const pid = Number((await pgctl('status')).stdout.match(/PID: (\d+)/)?.[1]);
  if (!pid) throw new StackError('PostgreSQL started but `pg_ctlcluster status` shows no PID.');
  await writePid('postgres', pid);
  return { pid };
}

async function pgStop(pid) {
  const res = await pgctl('stop');
  if (res.code !== 0) return terminate(pid, 'postgres');
  return 'stopped';
}

/** Create the database named in DATABASE_URL if it is missing (via psql/createdb). */
async function ensureDatabase() {
  const url = new URL(postgres.address());
  const db = decodeURIComponent(url.pathname.slice(1)) || decodeURIComponent(url.username) || 'postgres';
  if (!(await onPath('psql')) || !(await onPath('createdb'))) return `psql not on PATH: make sure database "${db}" exists`;
  const { host, port } = pgAddr();
  const conn = ['-w', '-h', host, '-p', String(port), '-U', decodeURIComponent(url.username) || 'postgres'];
  const env = { ...process.env, PGCONNECT_TIMEOUT: '5' };
  if (url.password) env.PGPASSWORD = decodeURIComponent(url.password);
  const sql = `select 1 from pg_database where datname='${db.replaceAll("'", "''")}'`;
  const check = await run('psql', [...conn, '-d', 'postgres', '-tAc', sql], { env });
  if (check.code !== 0) throw new StackError(`cannot query PostgreSQL for database "${db}":\n${check.stderr.trim()}`);
  if (check.stdout.trim() === '1') return `database ${db} exists`;
  const create = await run('createdb', [...conn, db], { env });
  if (create.code !== 0) throw new StackError(`createdb ${db} failed:\n${create.stderr.trim()}`);
  return `database ${db} created`;
}

export const postgres = {
  name: 'postgres',
  version: '-',
  envVar: 'DATABASE_URL',
  pattern: 'postgres',
  address: () => process.env.DATABASE_URL || DEFAULT_DATABASE_URL,
  probe: () => pgProbe().catch(() => false),
  start: pgStart,
  stop: pgStop,
  waitRunning: () => waitFor(pgProbe, { timeoutMs: 30_000, intervalMs: 200 }),
  afterUp: ensureDatabase,
};
