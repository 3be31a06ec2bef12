// `node bench/dist/redis-barrier-cost.js [writes]`: what waiting for a replica (GATEHOUSE_REDIS_WAIT_REPLICAS=1)
// costs the Redis records of one write, on the stack's Redis Cluster with a replica per master
// (`npm run stack:up -- redis-ha`). A write's records are what the executor does per approved write:
// claim the command, claim the write's key, stage the answer on both (together), settle both. With
// the barrier the two claims and the two stages wait for a replica; settling does not. Both arms run
// on the same cluster, alternating, 2,000 writes each by default: one write at a time (what a single
// call waits) and 64 at a time (what a busy executor spends: client CPU and Redis CPU per write, all
// six nodes counted, replicas included).
import { randomUUID } from 'node:crypto';
import { createRedis, ClaimLedger, Keyspace } from '@gatehouse/state';
import type { Redis, ReplicaBarrier } from '@gatehouse/state';

const WRITES = Number(process.argv[2] ?? 2_000);
const IN_FLIGHT = 64;
const ROUNDS = 3;
const URL_HA =
  process.env['REDIS_HA_URL'] ||
  'redis://127.0.0.1:7100?cluster=127.0.0.1:7101,127.0.0.1:7102,127.0.0.1:7103,127.0.0.1:7104,127.0.0.1:7105';
const NODES = [7100, 7101, 7102, 7103, 7104, 7105];

interface Arm {
  readonly name: string;
  readonly store: ClaimLedger;
}

/** One write's records, as the executor makes them (its command claim, its key, both staged, both settled). */
async function oneWrite(store: ClaimLedger, id: string): Promise<void> {
  const terms = { argumentsSha256: 'a'.repeat(64), leaseMs: 5_000, commandId: id };
  const owner = `bench/${id}`;
  await store.claim(`cmd:${id}`, terms.argumentsSha256, owner, terms.leaseMs, id);
  await store.claim(`key:${id}`, terms.argumentsSha256, owner, terms.leaseMs, id);
  await Promise.all([store.stage(`key:${id}`, owner, '{"status":"ok"}', terms), store.stage(`cmd:${id}`, owner, '{"status":"ok"}', terms)]);
  await Promise.all([
    store.settle(`key:${id}`, owner, 'succeeded', '{"status":"ok"}'),
    store.settle(`cmd:${id}`, owner, 'succeeded', '{}'),
  ]);
}

/** Redis CPU (user + sys, ms) summed over every node of the cluster. */
async function redisCpuMs(nodes: readonly Redis[]): Promise<number> {
  const infos = await Promise.all(nodes.map((node) => node.info('cpu')));
  return infos.reduce((sum, info) => {
    const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
    return sum + (field('used_cpu_user') + field('used_cpu_sys')) * 1000;
  }, 0);
}

const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;

/** Latency of one write at a time (ms): p50 and p99. */
async function serial(arm: Arm, count: number): Promise<{ p50: number; p99: number }> {
  const took: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const started = performance.now();
    await oneWrite(arm.store, `${arm.name}-s-${randomUUID()}`);
    took.push(performance.now() - started);
  }
  took.sort((a, b) => a - b);
  return { p50: percentile(took, 0.5), p99: percentile(took, 0.99) };
}

/** `IN_FLIGHT` writes at a time: writes/s, client CPU and Redis CPU per write (µs). */
async function loaded(arm: Arm, count: number, nodes: readonly Redis[]): Promise<{ perSecond: number; clientUs: number; redisUs: number }> {
  const redisBefore = await redisCpuMs(nodes);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < count; i += IN_FLIGHT)
    await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, count - i) }, () => oneWrite(arm.store, `${arm.name}-l-${randomUUID()}`)));
  const ms = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const redisMs = (await redisCpuMs(nodes)) - redisBefore;
  return { perSecond: (count / ms) * 1000, clientUs: (cpu.user + cpu.system) / count, redisUs: (redisMs * 1000) / count };
}

const keys = new Keyspace(`bench-barrier-${randomUUID().slice(0, 8)}:`);
const connect = (name: string, barrier?: ReplicaBarrier): Redis => createRedis(URL_HA, name, undefined, barrier);
const plain = connect('bench-barrier-plain');
const durable = connect('bench-barrier-durable', { replicas: 1, timeoutMs: 250 });
const nodes = NODES.map((port) => createRedis(`redis://127.0.0.1:${port}`, `bench-barrier-info-${port}`));
const arms: Arm[] = [
  { name: 'no wait', store: new ClaimLedger(plain, keys, { retentionMs: 60_000 }) },
  { name: 'WAIT 1', store: new ClaimLedger(durable, keys, { retentionMs: 60_000 }) },
];
const results = new Map<string, { p50: number[]; p99: number[]; perSecond: number[]; clientUs: number[]; redisUs: number[] }>();
for (const arm of arms) {
  await serial(arm, 100);
  await loaded(arm, 1_000, nodes);
  results.set(arm.name, { p50: [], p99: [], perSecond: [], clientUs: [], redisUs: [] });
}
for (let round = 0; round < ROUNDS; round += 1) {
  for (const arm of arms) {
    const row = results.get(arm.name);
    if (row === undefined) continue;
    const one = await serial(arm, Math.ceil(WRITES / 4));
    const many = await loaded(arm, WRITES, nodes);
    row.p50.push(one.p50);
    row.p99.push(one.p99);
    row.perSecond.push(many.perSecond);
    row.clientUs.push(many.clientUs);
    row.redisUs.push(many.redisUs);
  }
}
const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
console.log(`Redis records of one write, ${ROUNDS} alternating rounds (medians); one at a time, then ${IN_FLIGHT} in flight`);
console.log('| arm | p50 ms (one) | p99 ms (one) | writes/s (64) | client CPU µs/write | Redis CPU µs/write |');
console.log('|---|---|---|---|---|---|');
for (const [name, row] of results)
  console.log(
    `| ${name} | ${median(row.p50).toFixed(2)} | ${median(row.p99).toFixed(2)} | ${median(row.perSecond).toFixed(0)} | ${median(row.clientUs).toFixed(0)} | ${median(row.redisUs).toFixed(0)} |`,
  );
await Promise.all([plain.quit(), durable.quit(), ...nodes.map((node) => node.quit())]);
