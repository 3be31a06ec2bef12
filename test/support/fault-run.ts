import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { expect } from 'vitest';
import { isErrorCode } from '@gatehouse/contracts';
import type { Run } from '@gatehouse/state';
import { RIG, slotScopes } from './fault-rig.js';
import type { FaultRig } from './fault-rig.js';
import type { Gatehouse } from './gatehouse.js';
import { auditLoad, awaitLateAnswers, slotsHeld, summaryLine } from './load-audit.js';
import type { LoadAudit } from './load-audit.js';
import { checkLedgerHistory, historyLine } from './ledger-history.js';
import type { Failover, HistoryCheck } from './ledger-history.js';
import { lostTrail } from './lost-trail.js';
import { MixedLoad } from './mixed-load.js';
import { eventually } from './stack.js';

export interface FaultRunOptions {
  /** Names the run in its log lines. */
  readonly name: string;
  readonly calls?: number;
  /** The client's deadline for each call. */
  readonly timeoutMs?: number;
  /** The share of the calls settled before the fault begins. */
  readonly faultAfter?: number;
  /** Sequences at once (200 when unset) and a pace in calls per second (none when unset). */
  readonly load?: { readonly inFlight?: number; readonly ratePerSecond?: number };
  /** Makes the fault and heals it, with the load running; returns what to report about it. */
  readonly fault: (load: MixedLoad, phase: (name: string) => void) => Promise<Record<string, unknown>>;
  /**
   * A Redis failover the fault made, once the fault is over: the history is then checked allowing
   * the promoted replica to lack what its master acknowledged last (see checkLedgerHistory).
   */
  readonly failover?: () => Failover | undefined;
}

export interface FaultRunOutcome extends LoadAudit {
  readonly calls: number;
  /** The client's p99 latency over the calls that settled while the fault lasted. */
  readonly p99DuringFaultMs: number | undefined;
  readonly publishErrors: readonly string[];
  /** Results on the topic that could not be decoded. */
  readonly undecodable: number;
  /** The ledger's recorded history, replayed against the protocol model. */
  readonly history: HistoryCheck;
  /** The results topic is replicated, so the policy service and the executors publish answers in transactions. */
  readonly answersInTransactions: boolean;
}

/**
 * Runs a mixed load of reads and approved writes through the rig, makes the fault once a share of
 * it has settled, waits for every answer, and audits what the topics, the customers service and
 * Redis hold afterwards. A line every 10 s shows where a run that stalls stands.
 */
export async function runUnderFault(rig: FaultRig, options: FaultRunOptions): Promise<FaultRunOutcome> {
  const { g } = rig;
  const calls = options.calls ?? 5_000;
  const load = new MixedLoad(g, {
    calls,
    customers: rig.customers,
    inFlight: options.load?.inFlight ?? 200,
    timeoutMs: options.timeoutMs ?? 60_000,
    runOf: (t) => rig.runs.get(t) as Run,
    ...(options.load?.ratePerSecond === undefined ? {} : { ratePerSecond: options.load.ratePerSecond }),
  });
  const started = Date.now();
  // The test process hosts the client and (unless the rig runs them apart) the services; the system
  // of record answers on a thread of its own. How long the process's event loop stalled says how
  // late anything in it could act; the share of the load's time it was busy says how near its limit
  // it ran (a loop busy throughout with short tasks stalls little, yet takes in one new connection a turn).
  const loopDelay = monitorEventLoopDelay({ resolution: 20 });
  loopDelay.enable();
  const loopBefore = performance.eventLoopUtilization();
  await executorLoopDelays(rig.executorOps); // Reading them starts their measure afresh.
  let phase = 'before the fault';
  const progress = setInterval(() => {
    const seconds = Math.round((Date.now() - started) / 1000);
    console.info(`${options.name}: ${phase}, ${load.settled}/${calls} settled, ${rig.results.records.length} results, ${seconds} s`);
  }, 10_000);
  const loading = load.run();
  let facts: Record<string, unknown>;
  let from: number;
  let to: number;
  try {
    const share = options.faultAfter ?? 0.3;
    await eventually(() => (load.settled >= calls * share ? true : undefined), 180_000, `${calls * share} settled calls`);
    from = Date.now();
    facts = { 'fault after': `${load.settled} settled`, ...(await options.fault(load, (name) => (phase = name))) };
    to = Date.now();
    phase = 'after the fault';
    await loading;
  } finally {
    clearInterval(progress);
    loopDelay.disable();
  }
  const loopBusy = performance.eventLoopUtilization(loopBefore).utilization;
  const loadMs = Date.now() - started;
  const executorDelays = await executorLoopDelays(rig.executorOps);
  await awaitLateAnswers(load, rig.results, 60_000);
  await rig.results.caughtUp(60_000);
  await rig.handoffs.caughtUp(60_000);
  const slotsInUse = await slotsHeld(g, slotScopes(rig), RIG.leaseMs + 2_000);
  const audit = await auditLoad(g, load, rig.customers, rig.results, rig.handoffs, slotsInUse);
  const publishErrors = [
    ...new Set([...load.calls.values()].flatMap((c) => (c.publishError === undefined ? [] : [c.publishError.slice(0, 120)]))),
  ];
  const p99DuringFaultMs = load.p99Between(from, to);
  const inTransactions = answersInTransactions(g);
  console.info(
    summaryLine(options.name, audit.figures, {
      ...facts,
      'answers in transactions': inTransactions,
      'fault lasted ms': to - from,
      "client's p99 during the fault ms": p99DuringFaultMs,
      'load ms': loadMs,
      'publish errors': publishErrors,
      'publishes sent again': g.client.stats().publishRetries,
      'aborted records kafkajs handed on': rig.results.notCommitted + rig.handoffs.notCommitted,
      "test process's event loop delay p99/max ms": `${Math.round(loopDelay.percentile(99) / 1e6)}/${Math.round(loopDelay.max / 1e6)}`,
      "test process's event loop busy %": Math.round(loopBusy * 100),
      "executors' event loop delay p99/max ms": executorDelays,
    }),
  );
  if (audit.examples.repeated.length > 0) console.info(`${options.name}: repeated answers ${JSON.stringify(audit.examples.repeated)}`);
  if (audit.examples.late.length > 0)
    console.info(`${options.name}: calls the client stopped waiting for ${JSON.stringify(audit.examples.late)}`);
  const history = await checkLedgerHistory(rig.ledgerHistory, options.failover?.());
  console.info(historyLine(options.name, history));
  // Where any lost command got to, so a failure names the stage that dropped it.
  if (audit.examples.lost.length > 0) {
    const trail = await lostTrail(
      g,
      audit.examples.lost.map((e) => e.split(' ')[0] ?? e),
    ).catch((error: unknown) => `unavailable: ${String(error)}`);
    console.info(`${options.name}: lost commands' trail ${JSON.stringify(trail)}`);
  }
  return {
    ...audit,
    calls,
    p99DuringFaultMs,
    publishErrors,
    undecodable: rig.results.undecodable,
    history,
    answersInTransactions: inTransactions,
  };
}

/**
 * Whether the rig's services publish answers in transactions: they do wherever the results topic
 * is replicated (the rig never sets GATEHOUSE_ANSWER_TRANSACTIONS=off).
 */
export const answersInTransactions = (g: Gatehouse): boolean => g.events.topicSettings.replicationFactor >= 2;

/**
 * Each executor's event loop delay, p99/max in ms, since its metrics were last read (the executor
 * measures it afresh after each read); `unreachable` for one that is not answering (killed, or
 * inside a network namespace). The soak reads them every 15 s as well, so its report's per-minute
 * stalls are the ones to read there.
 */
async function executorLoopDelays(urls: readonly string[]): Promise<string[]> {
  return Promise.all(
    urls.map(async (url) => {
      try {
        const response = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(2_000) });
        const text = await response.text();
        const ms = (name: string): number => {
          const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
          return Math.round(Number(line?.split(' ').at(-1)) * 1000);
        };
        return `${ms('nodejs_eventloop_lag_p99_seconds')}/${ms('nodejs_eventloop_lag_max_seconds')}`;
      } catch {
        return 'unreachable';
      }
    }),
  );
}

/**
 * What every fault must leave intact: each call published and answered exactly once (or handed to
 * a person), no write applied twice, no answer contradicting the topic, no slot left held.
 */
export function expectNothingLostOrTwice(outcome: FaultRunOutcome): void {
  const { figures, examples, calls, publishErrors } = outcome;
  expect(figures.commands).toBe(calls);
  expect(figures.accepted + figures.notAccepted).toBe(calls);
  // The client sends a command again under its command_id until the broker takes it (within the
  // call's deadline), and the boundary answers that id once: no call is left unpublished.
  expect(figures.notAccepted, `calls whose publish failed for good: ${publishErrors.join('; ')}`).toBe(0);
  expect(figures.clientTimeouts, 'calls the client stopped waiting for').toBe(0);
  expect(examples.lost, 'accepted commands with no terminal result and no handoff').toEqual([]);
  expect(examples.conflicting, 'commands with two different terminal results').toEqual([]);
  expect(examples.repeatedPreviews, 'previews that made a second proposal').toEqual([]);
  // Where answers go out in transactions (a replicated results topic) a read_committed subscriber
  // counts exactly one result record per command. A single broker publishes them plainly, and a
  // stalled owner may add a second, identical record (docs/guarantees.md).
  if (outcome.answersInTransactions) expect(figures.duplicates, `result records beyond one: ${examples.repeated.join('; ')}`).toBe(0);
  expect(examples.answerMismatches, 'client answers that differ from the topic').toEqual([]);
  expect(examples.appliedTwice, 'customers changed twice').toEqual([]);
  // Every call reached the customers service with a valid assertion of its own, a re-sent write
  // too; the only refusals are of requests that came after their executor had abandoned them.
  expect(examples.refusedCalls, 'calls the system of record refused').toEqual([]);
  expect(examples.reusedAssertions, 'writes re-sent with an assertion already presented').toEqual([]);
  expect(examples.contradictions, 'customers whose version contradicts the answer').toEqual([]);
  expect(figures.applied).toBe(figures.appliedKeys);
  expect(figures.applied).toBeGreaterThan(0);
  // Answers are successes or typed refusals (a tool may time out under load); never anything else.
  expect(Object.keys(figures.codes).filter((c) => c !== 'ok' && !isErrorCode(c))).toEqual([]);
  expect(figures.handoffs).toBeGreaterThanOrEqual(figures.codes['OUTCOME_UNKNOWN'] ?? 0);
  expect(figures.slotsInUse).toBe(0);
  expect(outcome.undecodable).toBe(0);
  // Every step the claim ledger took is one the protocol model allows.
  expect(outcome.history.refused, 'the first ledger step the protocol model does not allow').toBeUndefined();
}
