// The Redis servers the local stack runs itself, beside the machine's Redis on 6379 (which keeps
// nothing on disk). All come from the machine's `redis-server` and `redis-cli`:
//   redis-aof      one server on 127.0.0.1:6380 with an append-only file (appendfsync everysec)
//                  in .stack/redis-aof: what Gatehouse keeps there survives a restart
//   redis-volatile one server on 127.0.0.1:6381 that keeps nothing on disk, like the machine's:
//                  the one the Redis-restart fault test stops and starts (never the machine's)
//   redis-cluster  a three-node Redis Cluster on 127.0.0.1:7000-7002 (the 16384 hash slots split
//                  three ways, no replicas), each node's files in .stack/redis-cluster/<port>
//   redis-ha       opt-in (started only when named): a Redis Cluster of three masters and three
//                  replicas on 127.0.0.1:7100-7105, nothing on disk, cluster-node-timeout 2000 so a
//                  killed master's replica takes over within seconds; each node's files in
//                  .stack/redis-ha/<port>, and each node a component of its own (redis-ha-7100 ...)
//                  that a fault test kills and starts again alone
import { mkdir, rm } from 'node:fs/promises';
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
const HA_DIR = join(STACK, 'redis-ha');
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

// ---------------------------------------------------------------- redis-cluster and redis-ha

// The two clusters differ in their shape and in how they come back: redis-cluster's nodes find each
// other again through their nodes.conf, while redis-ha starts afresh when it is brought up with
// none of its nodes running (a fault test's cluster must not carry the failovers of the last one).
const CLUSTER = {
  name: 'redis-cluster',
  envVar: 'REDIS_CLUSTER_URL',
  what: 'The local Redis Cluster (redis-cluster)',
  dir: CLUSTER_DIR,
  address: () => redisCluster.address(),
  replicas: 0,
  nodeTimeoutMs: 5000,
  extraArgs: [],
};
const HA = {
  name: 'redis-ha',
  envVar: 'REDIS_HA_URL',
  what: 'The local Redis Cluster with replicas (redis-ha)',
  dir: HA_DIR,
  address: () => redisHa.address(),
  replicas: 1,
  // A killed master is marked failed after 2 s without an answer and its replica promoted.
  nodeTimeoutMs: 2000,
  // Nothing on disk, replication included: a full sync streams the data at once (not after 5 s
  // of waiting for more replicas to share it) and the replica loads it from the socket, where it
  // would otherwise write a dump.rdb first.
  extraArgs: ['--repl-diskless-sync-delay', '0', '--repl-diskless-load', 'swapdb'],
};

/** The cluster's nodes: the URL's host and every host:port of its `cluster` parameter. */
function clusterNodes(spec) {
  const url = new URL(spec.address());
  const more = (url.searchParams.get('cluster') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return [hostPort(url.host, 6379), ...more.map((entry) => hostPort(entry, 6379))];
}

const nodeName = (spec, { port }) => `${spec.name}-${port}`;
const nodeList = (nodes) => nodes.map((n) => `${n.host}:${n.port}`).join(' ');

/** A node's cluster_state is ok (a node that wants a password counts as serving: it cannot tell us more). */
async function nodeClusterOk(node) {
  const reply = await ask(node.host, node.port, 'CLUSTER INFO');
  return typeof reply === 'string' && (reply.startsWith('-NOAUTH') || /\bcluster_state:ok\b/.test(reply));
}

/**
 * Where a node stands in replication (`INFO replication`): { role, linkUp, online } with `online`
 * the replicas streaming from it, or { auth: true } for a node that wants a password, or null.
 */
async function replication(node) {
  const reply = await ask(node.host, node.port, 'INFO replication');
  if (typeof reply !== 'string') return null;
  if (reply.startsWith('-NOAUTH')) return { auth: true };
  const role = reply.match(/^role:(\w+)/m)?.[1];
  if (!role) return null;
  return { role, linkUp: /^master_link_status:up/m.test(reply), online: (reply.match(/^slave\d+:.*state=online/gm) ?? []).length };
}

/** A replica streams from its master; a master has `replicas` replicas streaming from it. */
const replicatesOk = (r, replicas) => r?.auth || (r?.role === 'slave' ? r.linkUp : r?.role === 'master' && r.online >= replicas);

/**
 * The node's CLUSTER NODES agrees: every master that serves slots has `replicas` replicas not
 * marked failed (the views converge by gossip, a moment after each node knows its own role).
 */
async function viewOk(node, replicas) {
  const reply = await ask(node.host, node.port, 'CLUSTER NODES');
  if (typeof reply !== 'string') return false;
  if (reply.startsWith('-NOAUTH')) return true;
  const lines = reply
    .split('\n')
    .slice(1)
    .map((l) => l.trim().split(' '))
    .filter((f) => f.length >= 8);
  const live = (f) => !f[2].split(',').includes('fail');
  const masters = lines.filter((f) => live(f) && f[2].split(',').includes('master') && f.length > 8);
  return masters.length > 0 && masters.every((m) => lines.filter((f) => live(f) && f[3] === m[0]).length >= replicas);
}

/**
 * Every node says cluster_state:ok; with replicas, also all 16384 slots assigned and every node
 * replicating as it should (each master with its replica connected and in sync).
 */
async function clusterOk(spec) {
  const nodeOk = async (node) => {
    if (!(await nodeClusterOk(node))) return false;
    if (!spec.replicas) return true;
    const [info, repl, view] = await Promise.all([clusterInfo(node), replication(node), viewOk(node, spec.replicas)]);
    return (!info || info.cluster_slots_assigned === '16384') && replicatesOk(repl, spec.replicas) && view;
  };
  const oks = await Promise.all(clusterNodes(spec).map((n) => nodeOk(n).catch(() => false)));
  return oks.every(Boolean);
}

/** One node of redis-ha is back: cluster_state:ok, and replicating (or replicated from) again. */
async function haNodeOk(node) {
  return (await nodeClusterOk(node)) && replicatesOk(await replication(node), 1);
}

/** The running nodes of ours, by pid file. */
async function ownNodePids(spec) {
  const pids = await Promise.all(clusterNodes(spec).map((n) => ourPid(nodeName(spec, n), PATTERN)));
  return pids.filter((pid) => pid !== null);
}

/** Starts one node of the cluster on the nodes.conf it has (a new node has none: no peers, no slots). */
async function startClusterNode(spec, node) {
  if (await answersPing(node)) {
    throw new StackError(
      `${node.host}:${node.port} is served by a Redis this script did not start: stop it, or set ${spec.envVar} to a cluster of yours.`,
    );
  }
  const dir = join(spec.dir, String(node.port));
  await mkdir(dir, { recursive: true });
  return startServer(
    nodeName(spec, node),
    node,
    [
      '--dir',
      dir,
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      'nodes.conf',
      '--cluster-node-timeout',
      String(spec.nodeTimeoutMs),
      '--appendonly',
      'no',
      '--save',
      '',
      ...spec.extraArgs,
    ],
    10_000,
  );
}

/**
 * Starts whichever node of ours is not running (all at once), forms the cluster when every node
 * is new (no slots, no peers), and waits until the cluster is ready. Nodes that already formed a
 * cluster find each other again through their nodes.conf. With `fresh`, the nodes' files are
 * removed first: the cluster is formed anew.
 */
async function clusterEnsure(spec, note = () => {}, { fresh = false } = {}) {
  await requireBinaries(['redis-server', 'redis-cli'], spec.envVar, spec.what);
  const nodes = clusterNodes(spec);
  if (fresh && !(await ownNodePids(spec)).length) await rm(spec.dir, { recursive: true, force: true });
  await Promise.all(
    nodes.map(async (node) => {
      if (!(await ourPid(nodeName(spec, node), PATTERN))) await startClusterNode(spec, node);
    }),
  );
  const infos = await Promise.all(nodes.map((n) => clusterInfo(n)));
  if (infos.every((i) => i?.cluster_slots_assigned === '0' && i?.cluster_known_nodes === '1')) {
    note(`creating the cluster over ${nodeList(nodes)}`);
    const res = await run('redis-cli', [
      '--cluster',
      'create',
      ...nodes.map((n) => `${n.host}:${n.port}`),
      '--cluster-replicas',
      String(spec.replicas),
      '--cluster-yes',
    ]);
    if (res.code !== 0) throw new StackError(`redis-cli --cluster create failed:\n${(res.stdout + res.stderr).trim()}`);
  }
  try {
    await waitFor(() => clusterOk(spec), { timeoutMs: CLUSTER_READY_TIMEOUT_MS, intervalMs: 200 });
  } catch (err) {
    const now = await Promise.all(nodes.map((n) => Promise.all([clusterInfo(n), replication(n)]).catch(() => [null, null])));
    const states = now.map(
      ([i, r], k) =>
        `${nodeList([nodes[k]])}: state ${i?.cluster_state ?? '?'}, slots ${i?.cluster_slots_assigned ?? '?'}, ` +
        `known nodes ${i?.cluster_known_nodes ?? '?'}` +
        (spec.replicas ? `, role ${r?.role ?? '?'} (link ${r?.linkUp ? 'up' : 'down'}, replicas online ${r?.online ?? '?'})` : ''),
    );
    throw new StackError(
      `the Redis Cluster on ${nodeList(nodes)} did not ${spec.replicas ? 'become ready' : 'reach cluster_state:ok'}: ${err.message}\n` +
        `${states.join('\n')}\n` +
        `To start it afresh: node deploy/local/stack.mjs down ${spec.name} && rm -rf ${spec.dir}`,
    );
  }
  const pids = await ownNodePids(spec);
  return { pid: pids[0], note: `${nodes.length} nodes, pids ${pids.join(' ')}` };
}

/** Stops every node of ours (SIGTERM, then SIGKILL after 20 s). */
async function clusterStop(spec) {
  const outcomes = await Promise.all(
    clusterNodes(spec).map(async (node) => {
      const pid = await ourPid(nodeName(spec, node), PATTERN);
      const how = pid ? await terminate(pid, PATTERN) : 'gone';
      await removePid(nodeName(spec, node));
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
  ownPid: async () => (await ownNodePids(CLUSTER))[0] ?? null,
  probe: () => clusterOk(CLUSTER).catch(() => false),
  start: (note) => clusterEnsure(CLUSTER, note),
  stop: () => clusterStop(CLUSTER),
  /** Some node of ours runs: start the others and wait until the cluster is whole again. */
  waitRunning: () => clusterEnsure(CLUSTER),
};

/**
 * One node of redis-ha as a component of its own, for fault tests: `up redis-ha-7101` starts it
 * alone on the nodes.conf it kept, so a former master rejoins as its successor's replica.
 */
const haNode = (node) => ({
  name: nodeName(HA, node),
  version: '-',
  envVar: 'REDIS_HA_URL',
  pattern: PATTERN,
  optIn: true,
  address: () => `redis://${node.host}:${node.port}`,
  probe: () => answersPing(node).catch(() => false),
  start: async () => {
    await requireBinaries(['redis-server'], HA.envVar, HA.what);
    const pid = await startClusterNode(HA, node);
    await haNodeWait(node);
    return { pid };
  },
  waitRunning: () => haNodeWait(node),
});

async function haNodeWait(node) {
  try {
    await waitFor(() => haNodeOk(node), { timeoutMs: CLUSTER_READY_TIMEOUT_MS, intervalMs: 200 });
  } catch (err) {
    const [i, r] = await Promise.all([clusterInfo(node), replication(node)]).catch(() => [null, null]);
    throw new StackError(
      `${nodeList([node])} did not rejoin the Redis Cluster: ${err.message} (state ${i?.cluster_state ?? '?'}, ` +
        `role ${r?.role ?? '?'}, link ${r?.linkUp ? 'up' : 'down'}, replicas online ${r?.online ?? '?'})\n` +
        (await tail(join(LOGS, `${nodeName(HA, node)}.log`))),
    );
  }
}

export const redisHa = {
  name: 'redis-ha',
  version: '-',
  envVar: 'REDIS_HA_URL',
  pattern: PATTERN,
  /** Started only when named: a plain `up` leaves it alone, and `status` does not count it while it is absent. */
  optIn: true,
  address: () =>
    process.env.REDIS_HA_URL || 'redis://127.0.0.1:7100?cluster=127.0.0.1:7101,127.0.0.1:7102,127.0.0.1:7103,127.0.0.1:7104,127.0.0.1:7105',
  /** Six pid files, one per node: the component is ours while any of them is running. */
  ownPid: async () => (await ownNodePids(HA))[0] ?? null,
  probe: () => clusterOk(HA).catch(() => false),
  /** None of ours runs: form the cluster afresh. */
  start: (note) => clusterEnsure(HA, note, { fresh: true }),
  stop: () => clusterStop(HA),
  /** Some node of ours runs: start the others on their nodes.conf and wait until the cluster is whole again. */
  waitRunning: () => clusterEnsure(HA),
  get nodes() {
    return clusterNodes(HA).map((node) => haNode(node));
  },
};
