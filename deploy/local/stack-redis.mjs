// The Redis servers the local stack runs itself, beside the machine's Redis on 6379 (which keeps
// nothing on disk). All come from the machine's `redis-server` and `redis-cli`:
//   redis-aof      one server on 127.0.0.1:6380 with an append-only file (appendfsync everysec)
//                  in .stack/redis-aof: what Gatehouse keeps there survives a restart
//   redis-volatile one server on 127.0.0.1:6381 that keeps nothing on disk, like the machine's:
//                  the one the Redis-restart fault test stops and starts (never the machine's)
//   redis-cluster  a three-node Redis Cluster on 127.0.0.1:7000-7002 (the 16384 hash slots split
//                  three ways, no replicas), each node's files in .stack/redis-cluster/<port>
import { mkdir } from 'node:fs/promises';
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
  removePid,
  terminate,
  tcpProbe,
  hostPort,
  ourPid,
  processMatches,
} from './stack-lib.mjs';

const PATTERN = 'redis-server';
const AOF_DIR = join(STACK, 'redis-aof');
const CLUSTER_DIR = join(STACK, 'redis-cluster');
// Loading a large append-only file takes a while; Redis answers LOADING until it is done.
const AOF_READY_TIMEOUT_MS = 60_000;
const CLUSTER_READY_TIMEOUT_MS = 30_000;

/** Send one inline command; the first chunk of the reply, or false when nothing answers. */
const ask = (host, port, command) => tcpProbe(host, port, { send: `${command}\r\n` });

/** PONG, or a server that wants a password: either way a Redis is serving the port. */
async function answersPing({ host, port }) {
  const reply = await ask(host, port, 'PING');
  return typeof reply === 'string' && (reply.startsWith('+PONG') || reply.startsWith('-NOAUTH'));
}

/** `CLUSTER INFO` of one node as { field: value }, or null when it does not answer it. */
async function clusterInfo({ host, port }) {
  const reply = await ask(host, port, 'CLUSTER INFO');
  if (typeof reply !== 'string' || !reply.startsWith('$')) return null;
  return Object.fromEntries(
    reply
      .split('\r\n')
      .slice(1)
      .filter((l) => l.includes(':'))
      .map((l) => l.split(':', 2)),
  );
}

async function requireBinaries(binaries, envVar, what) {
  const missing = [];
  for (const binary of binaries) if (!(await onPath(binary))) missing.push(binary);
  if (missing.length > 0) {
    throw new StackError(
      `${what} needs ${missing.join(' and ')}, which ${missing.length > 1 ? 'are' : 'is'} not on PATH: ` +
        `apt-get install redis-server (it brings redis-cli), or set ${envVar} to a Redis of yours.`,
    );
  }
}

/** Starts a daemonized redis-server that writes its own pid file; resolves once it answers PING. */
async function startServer(name, { host, port }, args, timeoutMs) {
  const log = join(LOGS, `${name}.log`);
  await removePid(name);
  const res = await run(
    'redis-server',
    ['--daemonize', 'yes', '--bind', host, '--port', String(port), '--pidfile', join(PIDS, `${name}.pid`), '--logfile', log, ...args],
    { cwd: STACK },
  );
  if (res.code !== 0) throw new StackError(`redis-server (${name}) failed to start:\n${res.stderr.trim()}\n${await tail(log)}`);
  const dead = async () => {
    const pid = await readPid(name);
    return pid !== null && !(await processMatches(pid, PATTERN)) ? `redis-server (${name}) exited` : null;
  };
  try {
    await waitFor(() => answersPing({ host, port }), { timeoutMs, intervalMs: 100, dead });
    await waitFor(async () => (await readPid(name)) !== null, { timeoutMs: 5000, intervalMs: 100 });
  } catch (err) {
    throw new StackError(`Redis (${name}) did not answer PING on ${host}:${port}: ${err.message}\n${await tail(log)}`);
  }
  return readPid(name);
}

// ---------------------------------------------------------------- redis-aof

const aofAddr = () => hostPort(redisAof.address(), 6380);

async function aofStart() {
  await requireBinaries(['redis-server'], 'REDIS_AOF_URL', 'The durable Redis (redis-aof)');
  await mkdir(AOF_DIR, { recursive: true });
  // No RDB snapshots: the append-only file alone is what comes back after a restart.
  const pid = await startServer(
    'redis-aof',
    aofAddr(),
    ['--dir', AOF_DIR, '--appendonly', 'yes', '--appendfsync', 'everysec', '--save', ''],
    AOF_READY_TIMEOUT_MS,
  );
  return { pid, note: 'appendonly everysec' };
}

export const redisAof = {
  name: 'redis-aof',
  version: '-',
  envVar: 'REDIS_AOF_URL',
  pattern: PATTERN,
  address: () => process.env.REDIS_AOF_URL || 'redis://127.0.0.1:6380',
  probe: () => answersPing(aofAddr()).catch(() => false),
  start: aofStart,
  // SIGTERM is Redis' graceful shutdown: it writes and fsyncs the append-only file, then exits.
  waitRunning: () => waitFor(() => answersPing(aofAddr()), { timeoutMs: AOF_READY_TIMEOUT_MS, intervalMs: 200 }),
};

// ---------------------------------------------------------------- redis-volatile

const volatileAddr = () => hostPort(redisVolatile.address(), 6381);

async function volatileStart() {
  await requireBinaries(['redis-server'], 'REDIS_VOLATILE_URL', 'The restartable Redis (redis-volatile)');
  const dir = join(STACK, 'redis-volatile');
  await mkdir(dir, { recursive: true });
  // Nothing on disk: a restart loses everything, as the machine's Redis on 6379 would.
  const pid = await startServer('redis-volatile', volatileAddr(), ['--dir', dir, '--appendonly', 'no', '--save', ''], 10_000);
  return { pid, note: 'nothing kept on disk' };
}

export const redisVolatile = {
  name: 'redis-volatile',
  version: '-',
  envVar: 'REDIS_VOLATILE_URL',
  pattern: PATTERN,
  address: () => process.env.REDIS_VOLATILE_URL || 'redis://127.0.0.1:6381',
  probe: () => answersPing(volatileAddr()).catch(() => false),
  start: volatileStart,
  waitRunning: () => waitFor(() => answersPing(volatileAddr()), { timeoutMs: 10_000, intervalMs: 100 }),
};

// ---------------------------------------------------------------- redis-cluster

/** The cluster's nodes: the URL's host and every host:port of its `cluster` parameter. */
function clusterNodes() {
  const url = new URL(redisCluster.address());
  const more = (url.searchParams.get('cluster') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return [hostPort(url.host, 6379), ...more.map((entry) => hostPort(entry, 6379))];
}

const nodeName = ({ port }) => `redis-cluster-${port}`;
const nodeList = (nodes) => nodes.map((n) => `${n.host}:${n.port}`).join(' ');

/** Every node says cluster_state:ok (a node that wants a password counts as serving: it cannot tell us more). */
async function clusterOk() {
  const nodeOk = async (node) => {
    const reply = await ask(node.host, node.port, 'CLUSTER INFO');
    return typeof reply === 'string' && (reply.startsWith('-NOAUTH') || /\bcluster_state:ok\b/.test(reply));
  };
  const oks = await Promise.all(clusterNodes().map((n) => nodeOk(n).catch(() => false)));
  return oks.every(Boolean);
}

/** The running nodes of ours, by pid file. */
async function ownNodePids() {
  const pids = await Promise.all(clusterNodes().map((n) => ourPid(nodeName(n), PATTERN)));
  return pids.filter((pid) => pid !== null);
}

/**
 * Starts whichever node of ours is not running, forms the cluster when every node is new (no
 * slots, no peers), and waits until every node says cluster_state:ok. Nodes that already formed a
 * cluster find each other again through their nodes.conf.
 */
async function clusterEnsure(note = () => {}) {
  await requireBinaries(['redis-server', 'redis-cli'], 'REDIS_CLUSTER_URL', 'The local Redis Cluster (redis-cluster)');
  const nodes = clusterNodes();
  for (const node of nodes) {
    if (await ourPid(nodeName(node), PATTERN)) continue;
    if (await answersPing(node)) {
      throw new StackError(
        `${node.host}:${node.port} is served by a Redis this script did not start: stop it, or set REDIS_CLUSTER_URL to a cluster of yours.`,
      );
    }
    const dir = join(CLUSTER_DIR, String(node.port));
    await mkdir(dir, { recursive: true });
    await startServer(
      nodeName(node),
      node,
      [
        '--dir',
        dir,
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-node-timeout',
        '5000',
        '--appendonly',
        'no',
        '--save',
        '',
      ],
      10_000,
    );
  }
  const infos = await Promise.all(nodes.map((n) => clusterInfo(n)));
  const fresh = infos.every((i) => i?.cluster_slots_assigned === '0' && i?.cluster_known_nodes === '1');
  if (fresh) {
    note(`creating the cluster over ${nodeList(nodes)}`);
    const res = await run('redis-cli', [
      '--cluster',
      'create',
      ...nodes.map((n) => `${n.host}:${n.port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    if (res.code !== 0) throw new StackError(`redis-cli --cluster create failed:\n${(res.stdout + res.stderr).trim()}`);
  }
  try {
    await waitFor(clusterOk, { timeoutMs: CLUSTER_READY_TIMEOUT_MS, intervalMs: 200 });
  } catch (err) {
    const now = await Promise.all(nodes.map((n) => clusterInfo(n).catch(() => null)));
    const states = now.map(
      (i, k) =>
        `${nodeList([nodes[k]])}: state ${i?.cluster_state ?? '?'}, slots ${i?.cluster_slots_assigned ?? '?'}, known nodes ${i?.cluster_known_nodes ?? '?'}`,
    );
    throw new StackError(
      `the Redis Cluster on ${nodeList(nodes)} did not reach cluster_state:ok: ${err.message}\n${states.join('\n')}\n` +
        `To start it afresh: node deploy/local/stack.mjs down redis-cluster && rm -rf ${CLUSTER_DIR}`,
    );
  }
  const pids = await ownNodePids();
  return { pid: pids[0], note: `${nodes.length} nodes, pids ${pids.join(' ')}` };
}

/** Stops every node of ours (SIGTERM, then SIGKILL after 20 s). */
async function clusterStop() {
  const outcomes = await Promise.all(
    clusterNodes().map(async (node) => {
      const pid = await ourPid(nodeName(node), PATTERN);
      const how = pid ? await terminate(pid, PATTERN) : 'gone';
      await removePid(nodeName(node));
      return how;
    }),
  );
  return outcomes.includes('killed') ? 'killed' : 'stopped';
}

export const redisCluster = {
  name: 'redis-cluster',
  version: '-',
  envVar: 'REDIS_CLUSTER_URL',
  pattern: PATTERN,
  address: () => process.env.REDIS_CLUSTER_URL || 'redis://127.0.0.1:7000?cluster=127.0.0.1:7001,127.0.0.1:7002',
  /** Three pid files, one per node: the component is ours while any of them is running. */
  ownPid: async () => (await ownNodePids())[0] ?? null,
  probe: () => clusterOk().catch(() => false),
  start: clusterEnsure,
  stop: clusterStop,
  /** Some node of ours runs: start the others and wait until the cluster is whole again. */
  waitRunning: () => clusterEnsure(),
};
