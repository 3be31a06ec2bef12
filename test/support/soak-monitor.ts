import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import type { Admin } from 'kafkajs';
import type { Gatehouse } from './gatehouse.js';

/** A process the soak watches: its name and where its /metrics answer (none for the test process itself). */
export interface Watched {
  readonly name: string;
  readonly metricsUrl: string | undefined;
}

/** One look at a process's memory (MiB); absent when it did not answer (killed, restarting). */
export interface MemorySample {
  readonly at: number;
  readonly name: string;
  readonly rssMiB: number | undefined;
  readonly heapUsedMiB: number | undefined;
  /** The longest its event loop stalled since the look before (ms). */
  readonly loopMaxMs: number | undefined;
}

/** One look at a consumer group's lag: records on its topic not yet committed by it. */
export interface LagSample {
  readonly at: number;
  readonly group: string;
  readonly lag: number | undefined;
}

/** One look at the memory Redis holds on its masters (MiB, summed). */
export interface RedisSample {
  readonly at: number;
  readonly usedMiB: number | undefined;
}

export interface WatchedGroup {
  readonly groupId: string;
  readonly topic: string;
}

const MiB = 1024 * 1024;

/** The value of an unlabelled metric in a Prometheus text exposition, or undefined. */
function metricOf(exposition: string, name: string): number | undefined {
  const line = exposition.split('\n').find((l) => l.startsWith(`${name} `));
  const value = line === undefined ? Number.NaN : Number(line.slice(name.length + 1).split(' ')[0]);
  return Number.isFinite(value) ? value : undefined;
}

async function memoryOf(process: Watched, at: number, ownLoop: ReturnType<typeof monitorEventLoopDelay>): Promise<MemorySample> {
  if (process.metricsUrl === undefined) {
    const usage = globalThis.process.memoryUsage();
    const loopMaxMs = ownLoop.count === 0 ? undefined : ownLoop.max / 1e6;
    ownLoop.reset();
    return { at, name: process.name, rssMiB: usage.rss / MiB, heapUsedMiB: usage.heapUsed / MiB, loopMaxMs };
  }
  try {
    const response = await fetch(`${process.metricsUrl}/metrics`, { signal: AbortSignal.timeout(5_000) });
    const text = await response.text();
    const rss = metricOf(text, 'process_resident_memory_bytes');
    const heap = metricOf(text, 'nodejs_heap_size_used_bytes');
    // prom-client measures the loop afresh after each read: this is the most since the last look.
    const loopMax = metricOf(text, 'nodejs_eventloop_lag_max_seconds');
    return {
      at,
      name: process.name,
      rssMiB: rss === undefined ? undefined : rss / MiB,
      heapUsedMiB: heap === undefined ? undefined : heap / MiB,
      loopMaxMs: loopMax === undefined ? undefined : loopMax * 1000,
    };
  } catch {
    return { at, name: process.name, rssMiB: undefined, heapUsedMiB: undefined, loopMaxMs: undefined };
  }
}

async function lagOf(admin: Admin, group: WatchedGroup): Promise<number | undefined> {
  try {
    const [ends, [committed]] = await Promise.all([
      admin.fetchTopicOffsets(group.topic),
      admin.fetchOffsets({ groupId: group.groupId, topics: [group.topic] }),
    ]);
    const done = new Map((committed?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
    return ends.reduce((sum, end) => {
      const at = done.get(end.partition) ?? -1;
      return sum + Number(end.high) - (at < 0 ? Number(end.low) : at);
    }, 0);
  } catch {
    return undefined;
  }
}

async function redisUsedMiB(ports: readonly number[]): Promise<number | undefined> {
  try {
    const used = await Promise.all(
      ports.map(async (port) => {
        const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2_000 });
        try {
          await redis.connect();
          const info = await redis.info('memory');
          return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? Number.NaN);
        } finally {
          redis.disconnect();
        }
      }),
    );
    return used.every(Number.isFinite) ? used.reduce((a, b) => a + b, 0) / MiB : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Looks at every watched process's memory, each group's lag and Redis' memory every `everyMs`,
 * for the soak's report. Who is watched is asked at each look, so processes started again after a
 * kill are followed under their new names.
 */
export class SoakMonitor {
  readonly memory: MemorySample[] = [];
  readonly lags: LagSample[] = [];
  readonly redis: RedisSample[] = [];
  private readonly admin: Admin;
  /** The test process's own event loop (the client, the system of record), between looks. */
  private readonly ownLoop = monitorEventLoopDelay({ resolution: 20 });
  private timer: NodeJS.Timeout | undefined;
  private looking: Promise<void> = Promise.resolve();

  constructor(
    g: Gatehouse,
    private readonly watched: () => readonly Watched[],
    private readonly groups: readonly WatchedGroup[],
    private readonly redisPorts: () => Promise<readonly number[]>,
    private readonly everyMs = 15_000,
  ) {
    this.admin = g.kafka.admin();
  }

  async start(): Promise<void> {
    await this.admin.connect();
    this.ownLoop.enable();
    await this.look();
    this.timer = setInterval(() => {
      this.looking = this.looking.then(() => this.look());
    }, this.everyMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.looking;
    await this.look();
    this.ownLoop.disable();
    await this.admin.disconnect();
  }

  private async look(): Promise<void> {
    const at = Date.now();
    const ports = await this.redisPorts().catch(() => []);
    const [memory, lags, redis] = await Promise.all([
      Promise.all(this.watched().map((p) => memoryOf(p, at, this.ownLoop))),
      Promise.all(this.groups.map(async (group) => ({ at, group: group.groupId, lag: await lagOf(this.admin, group) }))),
      redisUsedMiB(ports),
    ]);
    this.memory.push(...memory);
    this.lags.push(...lags);
    this.redis.push({ at, usedMiB: redis });
  }
}
