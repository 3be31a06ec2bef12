import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isErrorCode } from '@gatehouse/contracts';
import type { Run } from '@gatehouse/state';
import { RIG, slotScopes, startFaultRig } from '../support/fault-rig.js';
import type { FaultRig } from '../support/fault-rig.js';
import { auditLoad, awaitLateAnswers, slotsHeld, summaryLine } from '../support/load-audit.js';
import { MixedLoad } from '../support/mixed-load.js';
import { pollUntil } from '../support/poll.js';
import { ownVolatileRedis } from '../support/stack-control.js';
import { eventually } from '../support/stack.js';

const CALLS = 5_000;
const CALL_TIMEOUT_MS = 60_000;

describe('a Redis restart (nothing kept on disk) during 5,000 calls', () => {
  let rig: FaultRig;
  let redis: Awaited<ReturnType<typeof ownVolatileRedis>>;

  beforeAll(async () => {
    // The stack's own Redis that keeps nothing on disk; refused loudly unless the stack started it.
    redis = await ownVolatileRedis();
    rig = await startFaultRig('rrestart', { redisUrl: redis.url });
  }, 120_000);
  afterAll(async () => {
    await rig.stop();
  }, 90_000);

  it('applies no write twice, refuses calls of vanished runs honestly, answers every accepted command once and leaks no slot', async () => {
    const { g } = rig;
    const runsBefore = new Set([...rig.runs.values()].map((r) => r.run_id));
    const load = new MixedLoad(g, {
      calls: CALLS,
      customers: rig.customers,
      inFlight: 200,
      timeoutMs: CALL_TIMEOUT_MS,
      runOf: (t) => rig.runs.get(t) as Run,
    });
    const started = Date.now();
    const loading = load.run();

    await eventually(() => (load.settled >= CALLS * 0.3 ? true : undefined), 180_000, `${CALLS * 0.3} settled calls`);
    const settledAtRestart = load.settled;
    const restartMs = await redis.restart();
    // The runs are gone with everything else; trusted code registers new ones for the calls to come.
    const runsGone = await Promise.all([...runsBefore].map(async (id) => (await g.redis.exists(g.keys.run(id))) === 0));
    await pollUntil(
      () =>
        rig.renewRuns().then(
          () => true,
          () => undefined,
        ),
      30_000,
      'new runs after the restart',
    );
    const settledAtRenewal = load.settled;

    await loading;
    const loadMs = Date.now() - started;
    await awaitLateAnswers(load, rig.results, 60_000);
    await rig.results.caughtUp();
    await rig.handoffs.caughtUp();
    const slotsInUse = await slotsHeld(g, slotScopes(rig), RIG.leaseMs + 2_000);
    const { figures, codeOf, examples } = await auditLoad(g, load, rig.customers, rig.results, rig.handoffs, slotsInUse);

    const runNotFound = [...load.calls.values()].filter((c) => codeOf.get(c.commandId) === 'RUN_NOT_FOUND');
    const refusedOnNewRuns = runNotFound.filter((c) => !runsBefore.has(c.runId)).map((c) => c.commandId);
    console.info(
      summaryLine('redis-restart', figures, {
        'restart after': `${settledAtRestart} settled`,
        'restart took ms': restartMs,
        'runs gone': `${runsGone.filter(Boolean).length}/${runsGone.length}`,
        'settled before new runs': settledAtRenewal - settledAtRestart,
        'RUN_NOT_FOUND (old runs)': runNotFound.length - refusedOnNewRuns.length,
        'load ms': loadMs,
      }),
    );

    if (examples.repeated.length > 0) console.info(`redis-restart: repeated answers ${JSON.stringify(examples.repeated)}`);
    expect(runsGone.every(Boolean), 'Redis kept runs across the restart').toBe(true);
    expect(figures.commands).toBe(CALLS);
    expect(figures.notAccepted).toBe(0);
    expect(examples.lost, 'accepted commands with no terminal result and no handoff').toEqual([]);
    expect(examples.conflicting, 'commands with two different terminal results').toEqual([]);
    expect(examples.answerMismatches, 'client answers that differ from the topic').toEqual([]);
    expect(examples.appliedTwice, 'customers changed twice').toEqual([]);
    // Every call reached the customers service with a valid assertion of its own, a re-sent write too.
    expect(examples.refusedCalls, 'calls the system of record refused').toEqual([]);
    expect(examples.reusedAssertions, 'writes re-sent with an assertion already presented').toEqual([]);
    expect(examples.contradictions, 'customers whose version contradicts the answer').toEqual([]);
    expect(figures.applied).toBe(figures.appliedKeys);
    expect(figures.applied).toBeGreaterThan(0);
    // Refusals are typed, and a vanished run is the only reason a run is not found.
    expect(Object.keys(figures.codes).filter((c) => c !== 'ok' && !isErrorCode(c))).toEqual([]);
    expect(refusedOnNewRuns, 'calls of runs registered after the restart refused RUN_NOT_FOUND').toEqual([]);
    expect(figures.handoffs).toBeGreaterThanOrEqual(figures.codes['OUTCOME_UNKNOWN'] ?? 0);
    expect(figures.slotsInUse).toBe(0);
    expect(rig.results.undecodable).toBe(0);
  }, 420_000);
});
