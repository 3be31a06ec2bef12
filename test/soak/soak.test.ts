import { mkdir, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventsConfig } from '@gatehouse/events';
import {
  awaitFailover,
  killPartitionLeader,
  killRedisMaster,
  leaveKafkaCluster,
  onKafkaCluster,
  redisHaDown,
  redisHaUp,
  redisMasters,
  restartRedisNode,
  startBroker,
} from '../support/cluster-control.js';
import { startFaultRig } from '../support/fault-rig.js';
import type { FaultRig } from '../support/fault-rig.js';
import { expectNothingLostOrTwice, runUnderFault } from '../support/fault-run.js';
import { isLate } from '../support/load-audit.js';
import type { MixedLoad } from '../support/mixed-load.js';
import { freePort } from '../support/processes.js';
import type { ServiceProcess } from '../support/processes.js';
import { clockOff } from '../support/skewed-clock.js';
import { SoakMonitor } from '../support/soak-monitor.js';
import type { Watched } from '../support/soak-monitor.js';
import { refusalCodesIn, soakReport } from '../support/soak-report.js';
import type { SoakFault } from '../support/soak-report.js';
import { config, eventually } from '../support/stack.js';

// `npm run soak -- --minutes 30` (scripts/soak.mjs): a paced mixed load on the stack's three-broker
// Kafka cluster (RF 3) and replicated Redis Cluster (every service waiting for a replica on its
// durable records), two executors (one with its clock 30 s ahead) and two policy processes, with
// one fault every few minutes, in turn: an executor, a partition leader of execute, a Redis master,
// a policy process, a partition leader of results, each killed with -9 and brought back.
const MINUTES = Number(process.env['GATEHOUSE_SOAK_MINUTES'] ?? '30');
const RATE = Number(process.env['GATEHOUSE_SOAK_RATE'] ?? '200');
const FAULT_EVERY_MINUTES = Number(process.env['GATEHOUSE_SOAK_FAULT_EVERY_MINUTES'] ?? '4');
const CALLS = Math.round(RATE * MINUTES * 60);
/** A tenth of the calls are writes: a preview and its commit per customer. */
const CUSTOMERS_PER_TENANT = Math.max(1, Math.floor((CALLS * 0.1) / 2 / 20));
/** Runs live 10 minutes; every tenant gets a fresh one this often. */
const RENEW_RUNS_MS = 3 * 60_000;
const REPORT_DIR = new URL('../../test-artifacts/soak/', import.meta.url);

interface Executor {
  readonly process: ServiceProcess;
  /** What it runs with besides its port (a skewed clock), kept for the one started in its place. */
  readonly extra: Record<string, string>;
  readonly url: string;
}

const countOf = (items: readonly string[]): Record<string, number> =>
  items.reduce<Record<string, number>>((counts, item) => ({ ...counts, [item]: (counts[item] ?? 0) + 1 }), {});

async function executorEnv(extra: Record<string, string> = {}): Promise<{ env: Record<string, string>; url: string }> {
  const port = await freePort();
  return { env: { ...extra, EXECUTOR_HOST: '127.0.0.1', EXECUTOR_PORT: String(port) }, url: `http://127.0.0.1:${port}` };
}

describe(`a soak: ${MINUTES} min at ${RATE} calls/s with a fault every ${FAULT_EVERY_MINUTES} min`, () => {
  let rig: FaultRig;
  let events: EventsConfig;
  const executors: Executor[] = [];
  let restarts = 0;

  beforeAll(async () => {
    events = await onKafkaCluster(config);
    const extras = [{}, clockOff(30)] as const;
    const setups = [await executorEnv(extras[0]), await executorEnv(extras[1])] as const;
    rig = await startFaultRig('soak', {
      events,
      redisUrl: await redisHaUp(),
      redisBarrier: { replicas: 1, timeoutMs: 250 },
      policyProcesses: 2,
      customersPerTenant: CUSTOMERS_PER_TENANT,
      executors: () => Promise.resolve([{ env: setups[0].env }, { env: setups[1].env }]),
    });
    rig.executors.processes.forEach((process, i) => {
      const setup = setups[i === 0 ? 0 : 1];
      executors.push({ process, extra: extras[i === 0 ? 0 : 1], url: setup.url });
    });
  }, 600_000);
  afterAll(async () => {
    try {
      await rig?.stop();
    } finally {
      await Promise.allSettled([leaveKafkaCluster(rig && { kafka: rig.g.kafka, prefix: rig.g.topicPrefix }), redisHaDown()]);
    }
  }, 300_000);

  /** Kills an executor with -9 and starts another in its place, with the same settings. */
  async function killExecutor(): Promise<Record<string, unknown>> {
    const victim = executors.shift() as Executor;
    await victim.process.stop('SIGKILL');
    const { env, url } = await executorEnv(victim.extra);
    executors.push({ process: rig.executors.spawn(`soak-exec-${(restarts += 1)}`, env), extra: victim.extra, url });
    return { killed: victim.process.name };
  }

  async function killPolicy(): Promise<Record<string, unknown>> {
    const policies = rig.policies;
    const victim = policies?.processes.find((p) => policies.isLive(p));
    if (policies === undefined || victim === undefined) throw new Error('no live policy process');
    await policies.kill(victim);
    await policies.spawn(`soak-policy-${(restarts += 1)}`);
    const started = Date.now();
    await policies.awaitMembers(2, 180_000);
    return { killed: victim.name, 'two members again after ms': Date.now() - started };
  }

  async function killLeader(role: 'execute' | 'results', load: MixedLoad): Promise<Record<string, unknown>> {
    const topic = rig.g.topics[role];
    const { before, after } = await killPartitionLeader(topic, 0);
    const settled = load.settled;
    await eventually(() => (load.settled >= settled + RATE * 30 ? true : undefined), 180_000, '30 s of calls with a broker down');
    return { 'killed broker': before.leader, 'new leader': after.leader, 'back in every isr after ms': await startBroker(before.leader) };
  }

  async function killRedis(): Promise<Record<string, unknown>> {
    const [victim] = await redisMasters();
    if (victim === undefined) throw new Error('redis-ha has no master');
    const killedAt = Date.now();
    await killRedisMaster(victim);
    const promoted = await awaitFailover(victim);
    const failoverMs = Date.now() - killedAt;
    return { 'killed master': victim, promoted, 'failover after ms': failoverMs, 'restart took ms': await restartRedisNode(victim) };
  }

  it(
    'holds its memory and latency, and loses, repeats and leaks nothing',
    async () => {
      const watched = (): Watched[] => [
        { name: 'test process (client, customers service, approval)', metricsUrl: undefined },
        ...executors.map((e) => ({ name: e.process.name, metricsUrl: e.url })),
        ...(rig.policies?.processes ?? [])
          .filter((p) => rig.policies?.isLive(p) === true)
          .map((p) => ({ name: p.name, metricsUrl: rig.policies?.urls.get(p) })),
      ];
      const monitor = new SoakMonitor(
        rig.g,
        watched,
        [
          { groupId: rig.executors.groupId, topic: rig.g.topics.execute },
          { groupId: rig.policies?.groupId ?? '', topic: rig.g.topics.commands },
        ],
        redisMasters,
      );
      const faults: SoakFault[] = [];
      const kinds = {
        'executor kill -9': () => killExecutor(),
        'execute leader kill -9': (load: MixedLoad) => killLeader('execute', load),
        'Redis master kill -9': () => killRedis(),
        'policy kill -9': () => killPolicy(),
        'results leader kill -9': (load: MixedLoad) => killLeader('results', load),
      };
      let load: MixedLoad | undefined;
      let startedAt = 0;
      await monitor.start();
      const renewing = setInterval(
        () => void rig.renewRuns().catch((e: unknown) => console.warn(`soak: renewing runs: ${String(e)}`)),
        RENEW_RUNS_MS,
      );
      try {
        const outcome = await runUnderFault(rig, {
          name: 'soak',
          calls: CALLS,
          timeoutMs: 90_000,
          faultAfter: 0,
          load: { inFlight: 2_000, ratePerSecond: RATE },
          fault: async (running, phase) => {
            load = running;
            startedAt = Date.now();
            // The first fault two minutes in, then one every FAULT_EVERY_MINUTES, none in the last two.
            for (let i = 0; ; i += 1) {
              const due = startedAt + (2 + i * FAULT_EVERY_MINUTES) * 60_000;
              if (due > startedAt + (MINUTES - 2) * 60_000) break;
              await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
              const [kind, make] = Object.entries(kinds)[i % Object.keys(kinds).length] as [
                string,
                (l: MixedLoad) => Promise<Record<string, unknown>>,
              ];
              phase(`fault ${i + 1}: ${kind}`);
              const at = Date.now();
              const facts = await make(running);
              faults.push({ kind, atMinute: (at - startedAt) / 60_000, tookMs: Date.now() - at, facts });
              phase(`after fault ${i + 1}`);
            }
            return { faults: faults.length };
          },
        });
        clearInterval(renewing);
        await monitor.stop();
        const report = soakReport({
          minutes: MINUTES,
          ratePerSecond: RATE,
          startedAt,
          calls: [...(load?.calls.values() ?? [])],
          faults,
          memory: monitor.memory,
          lags: monitor.lags,
          redis: monitor.redis,
          figures: outcome.figures,
          refusalCodes: refusalCodesIn(await rig.g.customers.metrics.scrape()),
          lateRefusals: rig.g.customers.refused.filter(isLate).map((r) => r.at),
          handoffReasons: countOf(rig.handoffs.records.map((r) => `${r.value?.reason}: ${r.value?.last_error?.slice(0, 80)}`)),
        });
        await mkdir(REPORT_DIR, { recursive: true });
        const stamp = new Date(startedAt).toISOString().replaceAll(':', '-');
        await writeFile(new URL(`soak-${stamp}.md`, REPORT_DIR), report);
        console.info(report);
        expect(faults.length).toBe(Math.floor((MINUTES - 4) / FAULT_EVERY_MINUTES) + 1);
        expectNothingLostOrTwice(outcome);
      } finally {
        clearInterval(renewing);
      }
    },
    (MINUTES + 25) * 60_000,
  );
});
