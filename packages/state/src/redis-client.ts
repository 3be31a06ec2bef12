import { Redis } from 'ioredis';

export type { Redis };

export const REDIS_URL_DEFAULT = 'redis://127.0.0.1:6379';

/** Reads REDIS_URL (validated once, at start-up). */
export function redisUrlFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const raw = env['REDIS_URL'];
  const url = raw === undefined || raw === '' ? REDIS_URL_DEFAULT : raw;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (cause) {
    throw new Error(`REDIS_URL is not a URL: "${url}"`, { cause });
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new Error(`REDIS_URL must be redis:// or rediss://, got "${url}"`);
  }
  return url;
}

/** Where a connection reports that it lost Redis (a service's logger). */
export interface RedisErrorLog {
  warn(fields: Record<string, unknown>, message: string): void;
}

const ERROR_LOG_INTERVAL_MS = 10_000;

/**
 * A Redis connection for one component. Auto-pipelining batches the commands issued in one tick
 * into one round trip, which is how per-message decisions share a network write under load.
 * While Redis is away the client reconnects on its own; the loss is logged at most every 10 s
 * (readiness reports it too), never left to print as an unhandled error event.
 */
export function createRedis(url: string, connectionName: string, log?: RedisErrorLog): Redis {
  const redis = new Redis(url, {
    connectionName,
    enableAutoPipelining: true,
    maxRetriesPerRequest: 5,
    lazyConnect: false,
  });
  let lastLogged = 0;
  redis.on('error', (error: Error) => {
    const now = Date.now();
    if (now - lastLogged < ERROR_LOG_INTERVAL_MS) return;
    lastLogged = now;
    log?.warn({ connection: connectionName, err: { message: error.message } }, 'Redis connection error; reconnecting');
  });
  return redis;
}
