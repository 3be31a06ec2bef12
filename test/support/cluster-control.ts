import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { Kafka, logLevel } from 'kafkajs';
import type { Admin } from 'kafkajs';
import type { EventsConfig } from '@gatehouse/events';
import { pollUntil } from './poll.js';
import { keepingStartedFile, stack } from './stack-control.js';

/**
 * The opt-in cluster components of the local stack, for fault tests at cluster scale:
 * `kafka-cluster` (three KRaft nodes, each broker and controller, RF 3, min.insync.replicas 2) and
 * `redis-ha` (a Redis Cluster of three masters and three replicas). Nodes are killed and started
 * again only when the stack script started them: its pid file names a live process whose command
 * line is that node's. Anything else is refused loudly.
 */

/** The brokers of the local stack's three-node Kafka cluster; node `n` is the n-th. */
const KAFKA_CLUSTER_BROKERS: readonly string[] = (
  process.env['KAFKA_CLUSTER_BROKERS'] || '127.0.0.1:29092,127.0.0.1:29093,127.0.0.1:29094'
).split(',');
/** The local stack's Redis Cluster with replicas (`redis-ha`), as REDIS_URL names a cluster. */
const REDIS_HA_URL =
  process.env['REDIS_HA_URL'] ||
  'redis://127.0.0.1:7100?cluster=127.0.0.1:7101,127.0.0.1:7102,127.0.0.1:7103,127.0.0.1:7104,127.0.0.1:7105';

const STACK_DIR = fileURLToPath(new URL('../../.stack/', import.meta.url));
const STACK_SCRIPT = 'node deploy/local/stack.mjs';

/** `up name`, leaving .stack/started.json as it was; a failure carries the script's report. */
async function stackUp(name: string): Promise<void> {
  try {
    await keepingStartedFile(() => stack('up', name));
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`\`${STACK_SCRIPT} up ${name}\` failed:\n${stdout}${stderr}`, { cause: error });
  }
}

// ---------------------------------------------------------------- processes the stack script started

/** True when `pid` is a live process (not a zombie). */
async function alive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  return stat !== undefined && !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}

/**
 * The pid in the stack script's pid file `name` when that process is alive and `isOurs` accepts its
 * command line; otherwise an error saying why it is not ours to signal.
 */
async function ownedPid(name: string, isOurs: (cmdline: string) => boolean, what: string): Promise<number> {
  const file = join(STACK_DIR, 'pids', `${name}.pid`);
  const pid = Number.parseInt((await readFile(file, 'utf8').catch(() => '')).trim(), 10);
  const refuse = (why: string): Error =>
    new Error(`${what} is not a running process the stack script started (${why}); start it with \`${STACK_SCRIPT} up ${name}\``);
  if (!Number.isInteger(pid) || pid <= 0) throw refuse(`no pid in ${file}`);
  if (!(await alive(pid))) throw refuse(`pid ${pid} of ${file} is not running`);
  const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).replaceAll('\0', ' ');
  if (!isOurs(cmdline)) throw refuse(`pid ${pid} runs \`${cmdline.trim().slice(0, 200)}\``);
  return pid;
}

/** SIGKILL, then wait until the process is gone. */
async function killNine(pid: number, what: string): Promise<void> {
  process.kill(pid, 'SIGKILL');
  await pollUntil(async () => ((await alive(pid)) ? undefined : true), 10_000, `${what} (pid ${pid}) to exit after SIGKILL`, 20);
}

// ---------------------------------------------------------------- kafka-cluster

/** Where a partition stands: its leader (-1: none), its replicas and its in-sync replicas, by node id. */
interface PartitionState {
  readonly leader: number;
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
}

/** A kafkajs admin on the cluster: a client independent of Gatehouse's, as tests use to inspect brokers. */
async function withKafkaAdmin<T>(work: (admin: Admin) => Promise<T>): Promise<T> {
  const kafka = new Kafka({
    clientId: 'gatehouse-test-cluster-control',
    brokers: [...KAFKA_CLUSTER_BROKERS],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 2000,
    requestTimeout: 10_000,
    // kafkajs tries the listed brokers in order, one more per retry: a killed node is skipped.
    retry: { retries: KAFKA_CLUSTER_BROKERS.length, initialRetryTime: 100, maxRetryTime: 300 },
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** Brings up the stack's three-node Kafka cluster (`up kafka-cluster`); resolves its brokers. */
async function kafkaClusterUp(): Promise<readonly string[]> {
  await stackUp('kafka-cluster');
  return KAFKA_CLUSTER_BROKERS;
}

/**
 * Brings up the three-node cluster and points `base` at it, every topic with three replicas (two of
 * which must hold a record before it counts as written), as a production cluster runs.
 */
export async function onKafkaCluster(base: EventsConfig): Promise<EventsConfig> {
  const brokers = await kafkaClusterUp();
  return { ...base, brokers, topicSettings: { ...base.topicSettings, replicationFactor: 3 } };
}

/**
 * Deletes one harness's topics from the cluster (`topics`, when it got as far as making them) and
 * stops the cluster whatever the deletion did: a node left running holds its ports for the next run.
 */
export async function leaveKafkaCluster(topics?: { readonly kafka: Kafka; readonly prefix: string }): Promise<void> {
  try {
    if (topics !== undefined) await deleteClusterTopics(topics.kafka, topics.prefix);
  } finally {
    await kafkaClusterDown();
  }
}

/** Stops the three nodes the stack script started (`down kafka-cluster`); their data is kept. */
export async function kafkaClusterDown(): Promise<void> {
  await stack('down', 'kafka-cluster');
}

const brokerPid = (nodeId: number): Promise<number> => {
  const props = join(STACK_DIR, 'kafka-cluster', `node-${nodeId}`, 'server.properties');
  return ownedPid(`kafka-cluster-${nodeId}`, (cmdline) => cmdline.includes(`kafka.Kafka ${props}`), `Kafka node ${nodeId}`);
};

/** SIGKILL of node `nodeId`'s java (broker and controller at once), as a crash would stop it. */
/** SIGKILL of Kafka node `nodeId`; resolves once the process is gone. */
export async function killBroker(nodeId: number): Promise<void> {
  await killNine(await brokerPid(nodeId), `Kafka node ${nodeId}`);
}

/**
 * Starts node `nodeId` alone (`up kafka-cluster-<id>`: it rejoins the cluster on its own storage,
 * and the script waits until it is registered and in the ISR of its readiness topic), then waits
 * until it is back in the ISR of every partition it is a replica of. Resolves the milliseconds taken.
 */
export async function startBroker(nodeId: number, timeoutMs = 120_000): Promise<number> {
  const started = Date.now();
  await stackUp(`kafka-cluster-${nodeId}`);
  await pollUntil(
    async () => ((await outOfSync(nodeId).catch(() => undefined))?.length === 0 ? true : undefined),
    timeoutMs,
    `Kafka node ${nodeId} to be back in the ISR of every partition it holds`,
    500,
  );
  return Date.now() - started;
}

/** The partitions (topic/partition) that have `nodeId` as a replica but not in their ISR. */
async function outOfSync(nodeId: number): Promise<string[]> {
  return withKafkaAdmin(async (admin) => {
    const { topics } = await admin.fetchTopicMetadata({ topics: await admin.listTopics() });
    return topics.flatMap((t) =>
      t.partitions.filter((p) => p.replicas.includes(nodeId) && !p.isr.includes(nodeId)).map((p) => `${t.name}/${p.partitionId}`),
    );
  });
}

/** What the cluster's metadata says of `topic`'s partition `partition` now. */
async function partitionState(topic: string, partition: number): Promise<PartitionState> {
  const found = await withKafkaAdmin(async (admin) => {
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
    return topics[0]?.partitions.find((p) => p.partitionId === partition);
  });
  if (found === undefined) throw new Error(`the Kafka cluster knows no partition ${topic}/${partition}`);
  return { leader: found.leader, replicas: found.replicas, isr: found.isr };
}

/** The node leading `topic`'s `partition` now (-1: none). */
export async function partitionLeader(topic: string, partition: number): Promise<number> {
  return (await partitionState(topic, partition)).leader;
}

/**
 * The node coordinating `transactionalId`'s transactions now: the leader of its partition of the
 * transaction log (which some producer must have asked a coordinator of, for it to exist), `abs(hashCode(id)) % 50` as the brokers place it (Java's String.hashCode; the
 * cluster keeps the default 50 partitions).
 */
export async function transactionCoordinatorOf(transactionalId: string): Promise<number> {
  let hash = 0;
  for (let i = 0; i < transactionalId.length; i += 1) hash = (Math.imul(hash, 31) + transactionalId.charCodeAt(i)) | 0;
  const partition = (hash === -2147483648 ? 0 : Math.abs(hash)) % 50;
  // The brokers make the transaction log at the first request for a coordinator, and elect its leaders after.
  return pollUntil(
    async () => {
      const leader = await partitionLeader('__transaction_state', partition).catch(() => -1);
      return leader >= 0 ? leader : undefined;
    },
    60_000,
    `a leader of __transaction_state/${partition}`,
    250,
  );
}

/**
 * Deletes the topics of one harness (`prefix`) from the Kafka cluster, which keeps its data between
 * runs where the stack's single broker's topics are cleaned by the test run.
 */
export async function deleteClusterTopics(kafka: Kafka, prefix: string): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const mine = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    await admin.deleteTopics({ topics: mine, timeout: 30_000 });
  } finally {
    await admin.disconnect();
  }
}

/** What killing a partition's leader came to: the partition before and after, and how long until another broker led it. */
export interface LeaderKill {
  readonly before: PartitionState;
  readonly after: PartitionState;
  readonly electedMs: number;
}

/** SIGKILL of the broker leading `topic`'s `partition`; resolves once another broker leads it. */
export async function killPartitionLeader(topic: string, partition: number): Promise<LeaderKill> {
  const before = await partitionState(topic, partition);
  const killedAt = Date.now();
  await killBroker(before.leader);
  const after = await pollUntil(
    async () => {
      const now = await partitionState(topic, partition).catch(() => undefined);
      return now !== undefined && now.leader >= 0 && now.leader !== before.leader ? now : undefined;
    },
    60_000,
    `a new leader of ${topic}/${partition}`,
    250,
  );
  return { before, after, electedMs: Date.now() - killedAt };
}

// ---------------------------------------------------------------- redis-ha

interface RedisNode {
  readonly host: string;
  readonly port: number;
}

/** One line of CLUSTER NODES. */
interface ClusterNode {
  readonly id: string;
  readonly port: number;
  readonly flags: readonly string[];
  /** The id of the master it replicates, or '-'. */
  readonly master: string;
  readonly slots: readonly string[];
}

/** The nodes of REDIS_HA_URL: its host and every host:port of its `cluster` parameter. */
function haNodes(): RedisNode[] {
  const url = new URL(REDIS_HA_URL);
  const more = (url.searchParams.get('cluster') ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => new URL(`redis://${entry}`));
  return [url, ...more].map((u) => ({ host: u.hostname, port: Number(u.port || 6379) }));
}

function haNode(port: number): RedisNode {
  const node = haNodes().find((n) => n.port === port);
  if (node === undefined) throw new Error(`port ${port} is not a node of redis-ha (${REDIS_HA_URL})`);
  return node;
}

/** One command to one node (not through the cluster); undefined when the node does not answer. */
async function ask(node: RedisNode, ...args: string[]): Promise<string | undefined> {
  const redis = new Redis(node.port, node.host, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 500,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return String(await redis.call(args[0] ?? 'PING', ...args.slice(1)));
  } catch {
    return undefined;
  } finally {
    redis.disconnect();
  }
}

function parseClusterNodes(reply: string): ClusterNode[] {
  return reply
    .trim()
    .split('\n')
    .map((line) => line.trim().split(' '))
    .map(([id = '', address = '', flags = '', master = '-', , , , , ...slots]) => ({
      id,
      port: Number(address.split('@')[0]?.split(':').pop()),
      flags: flags.split(','),
      master,
      slots,
    }));
}

/** The cluster as the first answering node (other than `skip`) sees it. */
async function clusterView(skip?: number): Promise<ClusterNode[]> {
  for (const node of haNodes().filter((n) => n.port !== skip)) {
    const reply = await ask(node, 'CLUSTER', 'NODES');
    if (reply !== undefined) return parseClusterNodes(reply);
  }
  throw new Error(`no node of redis-ha answers (${REDIS_HA_URL})`);
}

const isLiveMaster = (n: ClusterNode): boolean => n.flags.includes('master') && !n.flags.includes('fail') && n.slots.length > 0;

/** Brings up the stack's Redis Cluster with replicas (`up redis-ha`); resolves its URL. */
export async function redisHaUp(): Promise<string> {
  await stackUp('redis-ha');
  return REDIS_HA_URL;
}

/** Stops the six nodes the stack script started (`down redis-ha`); the next `up` forms the cluster afresh. */
export async function redisHaDown(): Promise<void> {
  await stack('down', 'redis-ha');
}

/** The ports of the masters serving slots now (failed ones left out), in ascending order. */
export async function redisMasters(): Promise<number[]> {
  return (await clusterView())
    .filter(isLiveMaster)
    .map((n) => n.port)
    .sort((a, b) => a - b);
}

/** The pid of redis-ha's node on `port`, refused unless the stack script started it. */
function haNodePid(port: number): Promise<number> {
  const node = haNode(port);
  return ownedPid(
    `redis-ha-${port}`,
    // The server's title names its address; without a title, its arguments name the port.
    (cmdline) => cmdline.includes('redis-server') && (new RegExp(`:${port}\\b`).test(cmdline) || cmdline.includes(`--port ${port} `)),
    `redis-ha's node on ${node.host}:${port}`,
  );
}

/** The replicas each killed master had, taken before the kill: after the failover nothing names them. */
const replicasOfKilled = new Map<number, readonly number[]>();

/** SIGKILL of the master on `port` (refused for a port that is not a master now), as a crash would stop it. */
export async function killRedisMaster(port: number): Promise<void> {
  const view = await clusterView();
  const self = view.find((n) => n.port === port);
  if (self === undefined || !isLiveMaster(self))
    throw new Error(
      `redis-ha's node on ${port} is not a master now (masters: ${view
        .filter(isLiveMaster)
        .map((n) => n.port)
        .join(', ')})`,
    );
  const pid = await haNodePid(port);
  replicasOfKilled.set(
    port,
    view.filter((n) => n.master === self.id).map((n) => n.port),
  );
  await killNine(pid, `redis-ha's node on ${port}`);
}

/**
 * Starts the node on `port` again alone (`up redis-ha-<port>`), on the nodes.conf it kept: a former
 * master comes back as its successor's replica. Resolves, with the milliseconds taken, once the node
 * says cluster_state:ok and streams from its master (or, still a master, to its replica). A node
 * still running is only waited for.
 */
export async function restartRedisNode(port: number): Promise<number> {
  haNode(port);
  const started = Date.now();
  await stackUp(`redis-ha-${port}`);
  return Date.now() - started;
}

/**
 * Resolves with the port of the replica promoted in place of the master that was on
 * `oldMasterPort`, once it says it is a master and every other node that answers says
 * cluster_state:ok.
 */
export async function awaitFailover(oldMasterPort: number, timeoutMs = 30_000): Promise<number> {
  let candidates = replicasOfKilled.get(oldMasterPort);
  if (candidates === undefined) {
    // Not killed through killRedisMaster: its replicas are those still naming it as their master.
    const view = await clusterView(oldMasterPort);
    const old = view.find((n) => n.port === oldMasterPort);
    candidates = view.filter((n) => old !== undefined && n.master === old.id).map((n) => n.port);
  }
  if (candidates.length === 0) throw new Error(`no replica of redis-ha's node on ${oldMasterPort} is known to take over from it`);
  const replicas = candidates;
  const others = haNodes().filter((n) => n.port !== oldMasterPort);
  return pollUntil(
    async () => {
      const promoted = await firstMaster(replicas);
      if (promoted === undefined) return undefined;
      const states = await Promise.all(others.map((n) => ask(n, 'CLUSTER', 'INFO')));
      return states.every((s) => s === undefined || /\bcluster_state:ok\b/.test(s)) ? promoted : undefined;
    },
    timeoutMs,
    `a replica of ${oldMasterPort} (${replicas.join(', ')}) to be promoted and the cluster to say cluster_state:ok`,
    100,
  );
}

/** The first of `ports` whose node says it is a master now. */
async function firstMaster(ports: readonly number[]): Promise<number | undefined> {
  for (const port of ports) {
    const role = await ask(haNode(port), 'INFO', 'replication');
    if (role !== undefined && /^role:master/m.test(role)) return port;
  }
  return undefined;
}

/** The shard (master and replicas, by port) that holds `key` now. */
export async function redisShardOf(key: string): Promise<{ readonly master: number; readonly replicas: readonly number[] }> {
  const slot = Number(await ask(haNodes()[0] as RedisNode, 'CLUSTER', 'KEYSLOT', key));
  const view = await clusterView();
  const holds = (range: string): boolean => {
    const [from = '', to = from] = range.split('-');
    return slot >= Number(from) && slot <= Number(to);
  };
  const master = view.find((n) => isLiveMaster(n) && n.slots.some(holds));
  if (master === undefined) throw new Error(`no live master of redis-ha serves slot ${slot}`);
  return { master: master.port, replicas: view.filter((n) => n.master === master.id && !n.flags.includes('fail')).map((n) => n.port) };
}

/**
 * Cuts the master on `port` off from its replicas, as a replica that falls behind would be: each
 * replica the stack script started is stopped (SIGSTOP), then the master drops their links
 * (CLIENT KILL TYPE replica), so what it acknowledges from now on reaches no replica — not even a
 * socket buffer a resumed replica would still read. Resolves the function that resumes them
 * (SIGCONT); they then reconnect and catch up, if their master is still there.
 */
export async function cutRedisReplicas(port: number): Promise<() => void> {
  const view = await clusterView();
  const self = view.find((n) => n.port === port);
  if (self === undefined || !isLiveMaster(self)) throw new Error(`redis-ha's node on ${port} is not a master now`);
  const pids = await Promise.all(view.filter((n) => n.master === self.id).map((n) => haNodePid(n.port)));
  for (const pid of pids) process.kill(pid, 'SIGSTOP');
  const resume = (): void => {
    for (const pid of pids) process.kill(pid, 'SIGCONT');
  };
  if ((await ask(haNode(port), 'CLIENT', 'KILL', 'TYPE', 'replica')) === undefined) {
    resume();
    throw new Error(`redis-ha's master on ${port} did not drop its replicas' links`);
  }
  return resume;
}
