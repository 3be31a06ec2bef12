import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallResult } from '@gatehouse/client';
import { PARTITION_KEY_HEADER } from '@gatehouse/events';
import type { Run } from '@gatehouse/state';
import type { Admin, Consumer } from 'kafkajs';
import { readCommitted } from './support/committed-records.js';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';
import { pollUntil } from './support/poll.js';
import { awaitGroup, describeGroup, EXECUTOR_MAIN, isSpreadOver, spawnService } from './support/processes.js';
import type { GroupView, ServiceProcess } from './support/processes.js';
import { recordResults } from './support/results.js';
import type { RecordedResult, ResultLog } from './support/results.js';
import { config, redisUrlFromEnv } from './support/stack.js';
import { Teardown } from './support/teardown.js';

const CALLS = 2_000;
const TENANTS = 20;
const IN_FLIGHT = 100;
const PARTITIONS = 3;
const LEASE_MS = 2_000;
/** How soon the group drops a dead executor; recovery after a kill -9 cannot be faster. */
const SESSION_TIMEOUT_MS = 10_000;
const CALL_TIMEOUT_MS = 70_000;
const KILL_AFTER = CALLS / 2;
/** About 25 s of calls on a quiet machine; 200+ s on one shared with heavy work (load 16), hence the bound. */
const TEST_TIMEOUT_MS = 360_000;

interface Figures {
  totalMs: number;
  callsPerSecond: number;
  callsPerSecondBeforeKill: number;
  latencyMs: { p50: number; p95: number; max: number };
  /** Medians over the calls answered before the kill, per stage: command → order → execution start → result → client. */
  stageMediansMs: { policy: number; toExecutor: number; execution: number; toClient: number };
  rebalancedAfterKillMs: number;
  inFlightAtKill: number;
  inFlightSettledAfterKillMs: number;
  longestStallMs: number;
  duplicates: number;
  ordersPublished: number;
  resultsByExecutor: Record<string, number>;
}

describe('two executor processes, one killed mid-load', () => {
  const teardown = new Teardown();
  let g: Gatehouse;
  let admin: Admin;
  let results: ResultLog;
  let executeKeys: Consumer;
  let watch: Awaited<ReturnType<Gatehouse['watchOrders']>>;
  const partitionOfCommand = new Map<string, number>();
  const executors: ServiceProcess[] = [];
  const runs: Run[] = [];
  const answers = new Map<string, CallResult>();
  const settledAt: number[] = [];
  const settledAtOf = new Map<string, number>();
  let groupBefore: GroupView;
  let killed: ServiceProcess | undefined;

  const groupId = () => `${g.label}-executor`;
  const spawnExecutor = (id: string): ServiceProcess =>
    spawnService(id, EXECUTOR_MAIN, {
      KAFKA_BROKERS: config.brokers.join(','),
      SCHEMA_REGISTRY_URL: config.registryUrl,
      REDIS_URL: redisUrlFromEnv(),
      GATEHOUSE_TOPIC_PREFIX: g.topicPrefix,
      GATEHOUSE_TOPIC_PARTITIONS: String(PARTITIONS),
      GATEHOUSE_REDIS_PREFIX: g.redisPrefix,
      EXECUTOR_GROUP_ID: groupId(),
      EXECUTOR_ID: id,
      EXECUTOR_LEASE_MS: String(LEASE_MS),
      EXECUTOR_SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS),
      CUSTOMERS_URL: g.customers.url,
      LOG_LEVEL: 'warn',
    });

  beforeAll(async () => {
    g = teardown.add(await startGatehouse('scale', { executors: 0, partitions: PARTITIONS }), (x) => x.stop());
    admin = g.kafka.admin();
    await teardown.add(admin, (a) => a.disconnect()).connect();
    // A new group starts at the end of the topic; committing the beginning first means no order
    // published between the executors' join and their first fetch can be skipped.
    await admin.setOffsets({
      groupId: groupId(),
      topic: g.topics.execute,
      partitions: Array.from({ length: PARTITIONS }, (_, partition) => ({ partition, offset: '0' })),
    });
    for (let i = 0; i < TENANTS; i += 1) {
      const tenant = i === 0 ? 'acme' : i === 1 ? 'globex' : `tenant-${String(i + 1).padStart(2, '0')}`;
      runs.push(await g.createRun('support-agent', { tenant }));
    }
    for (const id of ['a', 'b']) executors.push(teardown.add(spawnExecutor(`${g.label}-exec-${id}`), (e) => e.stop('SIGTERM', 10_000)));
    const earlyExit = Promise.race(
      executors.map(async (e) => {
        const exit = await e.exited;
        return `${e.name} exited (${exit.code ?? exit.signal}) before joining:\n${e.output()}`;
      }),
    );
    // Which execute partition each order went to: orders are spread by their command id.
    executeKeys = teardown.add(g.kafka.consumer({ groupId: `${g.label}-keys-${randomUUID()}` }), (c) => c.disconnect());
    const watchingKeys = (async () => {
      await executeKeys.connect();
      await executeKeys.subscribe({ topic: g.topics.execute, fromBeginning: true });
      await executeKeys.run({
        eachMessage: ({ partition, message }) => {
          const commandId = message.headers?.[PARTITION_KEY_HEADER]?.toString();
          if (commandId !== undefined) partitionOfCommand.set(commandId, partition);
          return Promise.resolve();
        },
      });
    })();
    [results, watch] = await Promise.all([
      recordResults(g).then((r) => teardown.add(r, (x) => x.stop())),
      g.watchOrders().then((w) => teardown.add(w, (x) => x.stop())),
      watchingKeys,
    ]);
    groupBefore = await awaitGroup(admin, groupId(), g.topics.execute, (v) => isSpreadOver(v, 2, PARTITIONS), 45_000, earlyExit);
  }, 120_000);

  afterAll(() => teardown.run(), 60_000);

  it(
    'answers every one of 2,000 calls exactly once at the client while an executor is killed half-way',
    async () => {
      const started = Date.now();
      const pending = new Set<string>();
      const latencies: number[] = [];
      const sentAtOf = new Map<string, number>();
      let next = 0;
      let killAt = 0;
      let inFlightAtKill: string[] = [];
      let rebalance: Promise<number> | undefined;
      // The member holding the most partitions is killed: its share must move to the survivor.
      const victimClient = [...groupBefore.members].sort((a, b) => b.partitions.length - a.partitions.length)[0]?.clientId;
      const victim = executors.find((e) => victimClient === `gatehouse-executor-${e.name}`);
      if (victim === undefined) throw new Error(`no executor process is member ${victimClient}`);

      const worker = async (): Promise<void> => {
        for (let i = next++; i < CALLS; i = next++) {
          const run = runs[i % TENANTS] as Run;
          const commandId = `scale-${i}-${randomUUID()}`;
          pending.add(commandId);
          const sentAt = Date.now();
          sentAtOf.set(commandId, sentAt);
          const answer = await g.client.call(
            'get_customer.v1',
            { customer_id: run.tenant === 'globex' ? 'C-2001' : 'C-1842' },
            { runId: run.run_id, tenant: run.tenant, commandId, timeoutMs: CALL_TIMEOUT_MS },
          );
          pending.delete(commandId);
          answers.set(commandId, answer);
          settledAt.push(Date.now());
          settledAtOf.set(commandId, Date.now());
          latencies.push(Date.now() - sentAt);
          if (answers.size === KILL_AFTER) {
            killed = victim;
            killAt = Date.now();
            inFlightAtKill = [...pending];
            void victim.stop('SIGKILL');
            rebalance = pollUntil(
              async () => {
                const view = await describeGroup(admin, groupId(), g.topics.execute);
                return isSpreadOver(view, 1, PARTITIONS) ? Date.now() - killAt : undefined;
              },
              60_000,
              'the survivor to hold every partition',
              50,
            );
          }
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, () => worker()));
      const totalMs = Date.now() - started;
      const rebalancedAfterKillMs = rebalance === undefined ? -1 : await rebalance;
      const inFlightSettledAfterKillMs = Math.max(0, ...inFlightAtKill.map((id) => (settledAtOf.get(id) ?? killAt) - killAt));

      // Exactly one terminal answer per call, none of them the client's own deadline.
      expect(answers.size).toBe(CALLS);
      const codes = new Map<string, number>();
      for (const [commandId, answer] of answers) {
        expect(answer.commandId).toBe(commandId);
        const code = answer.ok ? 'ok' : answer.error.code;
        codes.set(code, (codes.get(code) ?? 0) + 1);
      }
      const perTenant = CALLS / TENANTS;
      expect(Object.fromEntries(codes)).toEqual({ ok: 2 * perTenant, NOT_FOUND: (TENANTS - 2) * perTenant });
      for (const [commandId, answer] of answers) {
        const tenant = runs[Number(commandId.split('-')[1]) % TENANTS]?.tenant;
        if (answer.ok) expect((answer.result as { customer_id: string }).customer_id).toBe(tenant === 'globex' ? 'C-2001' : 'C-1842');
      }
      expect(killed?.pid).toBe(victim.pid);
      expect((await victim.exited).signal).toBe('SIGKILL');

      // On the topic: every command answered at least once; a repeat says the same thing.
      await results.waitFor([...answers.keys()], 20_000);
      let duplicates = 0;
      for (const commandId of answers.keys()) {
        const records = results.of(commandId);
        expect(records.length).toBeGreaterThanOrEqual(1);
        duplicates += records.length - 1;
        const [first, ...rest] = records as [RecordedResult, ...RecordedResult[]];
        for (const again of rest) {
          expect([again.event.status, again.event.result, again.event.error?.code]).toEqual([
            first.event.status,
            first.event.result,
            first.event.error?.code,
          ]);
        }
      }
      expect(results.undecodable).toBe(0);

      // Orders as a read_committed subscriber counts them: records, not offsets (each transaction's marker takes one).
      const ordersPublished = (await readCommitted(g.kafka.config, g.topics.execute)).length;
      const survivorName = executors.find((e) => e !== victim)?.name ?? 'survivor';
      const ownerBefore = new Map(
        groupBefore.members.flatMap((m) => m.partitions.map((p) => [p, m.clientId.replace('gatehouse-executor-', '')] as const)),
      );
      const resultsByExecutor: Record<string, number> = {};
      for (const record of results.all) {
        if (!record.event.command_id.startsWith('scale-')) continue;
        const partition = partitionOfCommand.get(record.event.command_id);
        const owner = record.event.completed_at < killAt && partition !== undefined ? (ownerBefore.get(partition) ?? '?') : survivorName;
        resultsByExecutor[owner] = (resultsByExecutor[owner] ?? 0) + 1;
      }
      const gaps = settledAt.slice(1).map((t, i) => t - (settledAt[i] ?? t));
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
      const issuedAt = new Map(watch.orders.map((o) => [o.command_id, o.issued_at]));
      const early = [...answers.keys()].filter((id) => (settledAtOf.get(id) ?? Infinity) < killAt);
      const stage = (f: (id: string, r: RecordedResult) => number | undefined) =>
        median(
          early.flatMap((id) => {
            const r = results.of(id)[0];
            const v = r === undefined ? undefined : f(id, r);
            return v === undefined ? [] : [v];
          }),
        );
      const stageMediansMs = {
        policy: stage((id) => (issuedAt.get(id) ?? NaN) - (sentAtOf.get(id) ?? NaN)),
        toExecutor: stage((id, r) => r.event.completed_at - (r.event.duration_ms ?? 0) - (issuedAt.get(id) ?? NaN)),
        execution: stage((_id, r) => r.event.duration_ms ?? undefined),
        toClient: stage((id, r) => (settledAtOf.get(id) ?? NaN) - r.event.completed_at),
      };
      const sorted = [...latencies].sort((a, b) => a - b);
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
      const figures: Figures = {
        totalMs,
        callsPerSecond: Math.round((CALLS / totalMs) * 1000),
        callsPerSecondBeforeKill: Math.round((KILL_AFTER / (killAt - started)) * 1000),
        latencyMs: { p50: at(0.5), p95: at(0.95), max: at(1) },
        stageMediansMs,
        rebalancedAfterKillMs,
        inFlightAtKill: inFlightAtKill.length,
        inFlightSettledAfterKillMs,
        longestStallMs: Math.max(0, ...gaps),
        duplicates,
        ordersPublished,
        resultsByExecutor,
      };
      console.info(
        `executor-scale figures: ${JSON.stringify(figures)}; partitions before the kill: ${JSON.stringify(groupBefore.members.map((m) => [m.clientId, m.partitions]))}`,
      );
      expect(ordersPublished).toBe(CALLS);
      // The dead member's partitions move once the group misses its heartbeats (EXECUTOR_SESSION_TIMEOUT_MS).
      expect(rebalancedAfterKillMs).toBeGreaterThan(0);
      expect(rebalancedAfterKillMs).toBeLessThan(SESSION_TIMEOUT_MS + 20_000);
    },
    TEST_TIMEOUT_MS,
  );
});
