import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Run } from '@gatehouse/state';
import { leaveKafkaCluster, onKafkaCluster } from '../support/cluster-control.js';
import { startFaultRig, RIG, slotScopes } from '../support/fault-rig.js';
import type { FaultRig } from '../support/fault-rig.js';
import { answersInTransactions, expectNothingLostOrTwice } from '../support/fault-run.js';
import { checkLedgerHistory, historyLine } from '../support/ledger-history.js';
import { auditLoad, awaitLateAnswers, slotsHeld, summaryLine } from '../support/load-audit.js';
import { MixedLoad } from '../support/mixed-load.js';
import { config, eventually } from '../support/stack.js';

const CALLS = 5_000;
/** A killed policy instance's partitions wait out its 30 s Kafka session before the survivor takes them. */
const CALL_TIMEOUT_MS = 90_000;

// On the stack's single broker the services publish answers plainly; on its three-node cluster
// (deploy/local/stack-kafka-cluster.mjs), every topic with three replicas, they publish them in
// Kafka transactions, and a read_committed subscriber counts exactly one result record per command
// though the processes that staged them die between publishing and recording.
const BROKERS = [
  { where: 'one broker', label: 'pkill', cluster: false },
  { where: 'a three-node cluster', label: 'pkill-cluster', cluster: true },
] as const;

describe.each(BROKERS)('kill -9 of an executor and of a policy instance during 5,000 calls, on $where', ({ label, cluster }) => {
  let rig: FaultRig;

  beforeAll(async () => {
    rig = await startFaultRig(label, { policyProcesses: 2, ...(cluster ? { events: await onKafkaCluster(config) } : {}) });
  }, 360_000);
  afterAll(async () => {
    // The cluster goes down even when the rig never started, or fails to stop.
    try {
      await rig?.stop();
    } finally {
      if (cluster) await leaveKafkaCluster(rig && { kafka: rig.g.kafka, prefix: rig.g.topicPrefix });
    }
  }, 180_000);

  it('applies no write twice, answers every accepted command once (or hands it over) and leaks no slot', async () => {
    const { g, executors, policies } = rig;
    if (policies === undefined) throw new Error('the policy must run as processes here');
    const load = new MixedLoad(g, {
      calls: CALLS,
      customers: rig.customers,
      inFlight: 200,
      timeoutMs: CALL_TIMEOUT_MS,
      runOf: (t) => rig.runs.get(t) as Run,
    });
    const started = Date.now();
    const loading = load.run();

    await eventually(() => (load.settled >= CALLS / 4 ? true : undefined), 300_000, `${CALLS / 4} settled calls`);
    const executorVictim = executors.processes[0];
    if (executorVictim === undefined) throw new Error('no executor process');
    const executorExit = await executorVictim.stop('SIGKILL');
    const executorKilledAt = load.settled;
    executors.spawn(`${g.label}-exec-a-restarted`);

    await eventually(() => (load.settled >= CALLS / 2 ? true : undefined), 300_000, `${CALLS / 2} settled calls`);
    const policyVictim = policies.processes[0];
    if (policyVictim === undefined) throw new Error('no policy process');
    await policies.kill(policyVictim);
    const policyKilledAt = load.settled;

    await loading;
    const loadMs = Date.now() - started;
    // A command the client stopped waiting for is still answered on the topic, or it is lost.
    await awaitLateAnswers(load, rig.results, 60_000);
    await rig.results.caughtUp();
    await rig.handoffs.caughtUp();
    const slotsInUse = await slotsHeld(g, slotScopes(rig), RIG.leaseMs + 2_000);
    const audit = await auditLoad(g, load, rig.customers, rig.results, rig.handoffs, slotsInUse);
    const { figures } = audit;
    const history = await checkLedgerHistory(rig.ledgerHistory);
    const inTransactions = answersInTransactions(g);
    console.info(historyLine(label, history));
    console.info(
      summaryLine(label, figures, {
        'answers in transactions': inTransactions,
        'executor killed after': `${executorKilledAt} settled`,
        'policy killed after': `${policyKilledAt} settled`,
        'load ms': loadMs,
      }),
    );

    // Why any write went to a person: the reasons and the last errors the executors gave.
    for (const handoff of rig.handoffs.records)
      console.info(`${label} handoff: ${handoff.value?.tool} ${handoff.value?.reason}: ${handoff.value?.last_error}`);
    expect(executorExit.signal).toBe('SIGKILL');
    expect((await policyVictim.exited).signal).toBe('SIGKILL');
    // The broker never went away: every command was accepted, and each answered once (or handed over).
    expectNothingLostOrTwice({
      ...audit,
      calls: CALLS,
      p99DuringFaultMs: undefined,
      publishErrors: [],
      undecodable: rig.results.undecodable,
      history,
      answersInTransactions: inTransactions,
    });
    expect(figures.answered + figures.handoffs).toBeGreaterThanOrEqual(figures.accepted);
    // The status query is up and the customers service honours the Idempotency-Key: a write whose
    // executor died is settled by asking, or sent again under its key — never handed to a person.
    expect(figures.handoffs).toBe(0);
  }, 600_000);
});
