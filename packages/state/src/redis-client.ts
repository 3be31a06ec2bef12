import { Cluster, Redis as RedisServer } from 'ioredis';
import { requireReplicas } from './lua-script.js';
import type { ReplicaBarrier } from './lua-script.js';

/**
 * A connection to Redis: one server, or a Redis Cluster. The stores run the same commands on
 * both: every key one script or transaction touches carries the same hash tag (see Keyspace), so
 * it lives in one hash slot of a cluster.
 */
export type Redis = RedisServer | Cluster;

export const REDIS_URL_DEFAULT = 'redis://127.0.0.1:6379';

/** A node of a Redis Cluster that the client asks for the cluster's layout. */
export interface RedisNodeAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * Where REDIS_URL points. `redis://[user:password@]host:port[/db]` is one server. A `cluster`
 * parameter makes it a Redis Cluster: the URL's host and every `host:port` the parameter lists
 * (comma-separated, possibly none) are seed nodes the client learns the whole cluster from; the
 * URL's user, password and scheme (rediss:// = TLS) apply to every node.
 */
export type RedisTarget =
  | { readonly kind: 'server'; readonly url: string }
  | {
      readonly kind: 'cluster';
      readonly seeds: readonly RedisNodeAddress[];
      readonly username: string | undefined;
      readonly password: string | undefined;
      readonly tls: boolean;
    };

/** What reading a REDIS_URL gives: where it points, or why it is refused. */
export type RedisUrlReading = { readonly ok: true; readonly target: RedisTarget } | { readonly ok: false; readonly reason: string };

const CLUSTER_PARAMETER = 'cluster';

function seedOf(entry: string): RedisNodeAddress | undefined {
  let parsed: URL;
  try {
    parsed = new URL(`redis://${entry}`);
  } catch {
    return undefined;
  }
  const plain = parsed.username === '' && parsed.password === '' && parsed.pathname === '' && parsed.search === '' && parsed.hash === '';
  if (!plain || parsed.port === '' || parsed.hostname === '') return undefined;
  return { host: parsed.hostname.replace(/^\[|\]$/g, ''), port: Number(parsed.port) };
}

/** Reads a redis:// or rediss:// URL, as REDIS_URL holds it; never echoes the URL (it may carry a password). */
export function readRedisUrl(url: string): RedisUrlReading {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'not a URL' };
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') return { ok: false, reason: 'not a redis:// or rediss:// URL' };
  if (!parsed.searchParams.has(CLUSTER_PARAMETER)) return { ok: true, target: { kind: 'server', url } };

  const others = [...parsed.searchParams.keys()].filter((name) => name !== CLUSTER_PARAMETER);
  if (others.length > 0)
    return { ok: false, reason: `a cluster URL takes no parameter but \`${CLUSTER_PARAMETER}\` (got ${others.join(', ')})` };
  if (!['', '/', '/0'].includes(parsed.pathname)) return { ok: false, reason: 'a Redis Cluster has only database 0; drop the /<db> path' };
  const first = seedOf(parsed.host);
  if (first === undefined) return { ok: false, reason: 'a cluster URL names its first node as host:port' };
  const seeds = [first];
  for (const entry of parsed.searchParams.getAll(CLUSTER_PARAMETER).flatMap((v) => v.split(','))) {
    const trimmed = entry.trim();
    if (trimmed === '') continue;
    const seed = seedOf(trimmed);
    if (seed === undefined) return { ok: false, reason: `the \`${CLUSTER_PARAMETER}\` entry "${trimmed}" is not host:port` };
    seeds.push(seed);
  }
  return {
    ok: true,
    target: {
      kind: 'cluster',
      seeds,
      username: parsed.username === '' ? undefined : decodeURIComponent(parsed.username),
      password: parsed.password === '' ? undefined : decodeURIComponent(parsed.password),
      tls: parsed.protocol === 'rediss:',
    },
  };
}

/** Reads REDIS_URL (validated once, at start-up). */
export function redisUrlFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const raw = env['REDIS_URL'];
  const url = raw === undefined || raw === '' ? REDIS_URL_DEFAULT : raw;
  const reading = readRedisUrl(url);
  if (!reading.ok) {
    // Only a value that is not a URL at all is shown: it cannot be a URL carrying a password.
    if (reading.reason === 'not a URL') throw new Error(`REDIS_URL is not a URL: "${url}"`);
    if (reading.reason === 'not a redis:// or rediss:// URL') throw new Error(`REDIS_URL must be redis:// or rediss://, got "${url}"`);
    throw new Error(`REDIS_URL is refused: ${reading.reason}`);
  }
  return url;
}

/** Where a connection reports that it lost Redis (a service's logger). */
export interface RedisErrorLog {
  warn(fields: Record<string, unknown>, message: string): void;
}

const ERROR_LOG_INTERVAL_MS = 10_000;

/**
 * A Redis connection for one component: to one server, or to a Redis Cluster when the URL has a
 * `cluster` parameter (see RedisTarget). On one server, auto-pipelining batches the commands issued
 * in one tick into one round trip, which is how per-message decisions share a network write under
 * load; on a cluster, the script batcher's one EVALSHA per hash slot and turn does that. While Redis is away the client reconnects on its own; the loss is logged at
 * most every 10 s (readiness reports it too), never left to print as an unhandled error event.
 * `barrier`: how many replicas must hold the writes of its durable script calls (LuaScript.runDurable).
 */
export function createRedis(url: string, connectionName: string, log?: RedisErrorLog, barrier?: ReplicaBarrier): Redis {
  const reading = readRedisUrl(url);
  if (!reading.ok) throw new Error(`REDIS_URL is refused: ${reading.reason}`);
  const { target } = reading;
  const redis: Redis =
    target.kind === 'server'
      ? new RedisServer(target.url, { connectionName, enableAutoPipelining: true, maxRetriesPerRequest: 5, lazyConnect: false })
      : new Cluster(
          target.seeds.map((seed) => ({ host: seed.host, port: seed.port })),
          {
            // ioredis groups a tick's commands into one pipeline per node by the slot of each
            // command's first argument, which for EVALSHA is the script's digest, not a key: scripts
            // whose keys live on different nodes would share a pipeline, and the client refuses that
            // whole pipeline. The script batcher already sends one EVALSHA per hash slot per turn,
            // which the cluster client routes by its keys.
            enableAutoPipelining: false,
            lazyConnect: false,
            redisOptions: {
              connectionName,
              maxRetriesPerRequest: 5,
              ...(target.username === undefined ? {} : { username: target.username }),
              ...(target.password === undefined ? {} : { password: target.password }),
              ...(target.tls ? { tls: {} } : {}),
            },
          },
        );
  let lastLogged = 0;
  redis.on('error', (error: Error) => {
    const now = Date.now();
    if (now - lastLogged < ERROR_LOG_INTERVAL_MS) return;
    lastLogged = now;
    log?.warn({ connection: connectionName, err: { message: error.message } }, 'Redis connection error; reconnecting');
  });
  if (barrier !== undefined) requireReplicas(redis, barrier);
  return redis;
}
