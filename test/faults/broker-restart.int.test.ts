import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isErrorCode } from '@gatehouse/contracts';
import type { Run } from '@gatehouse/state';
import { RIG, slotScopes, startFaultRig } from '../support/fault-rig.js';
import type { FaultRig } from '../support/fault-rig.js';
import { auditLoad, awaitLateAnswers, slotsHeld, summaryLine } from '../support/load-audit.js';
import { lostTrail } from '../support/lost-trail.js';
import { MixedLoad } from '../support/mixed-load.js';
import { ownKafka } from '../support/stack-control.js';
import { eventually } from '../support/stack.js';

const CALLS = 5_000;
const CALL_TIMEOUT_MS = 60_000;

describe('a Kafka broker restart during 5,000 calls', () => {
  let rig: FaultRig;
  let broker: Awaited<ReturnType<typeof ownKafka>>;

  beforeAll(async () => {
    // Refuses loudly when the broker is not the stack script's: this test must restart it.
    broker = await ownKafka();
    rig = await startFaultRig('brestart');
  }, 120_000);
  afterAll(async () => {
    await rig.stop();
  }, 180_000);

  it('applies no write twice, answers every accepted command once (or hands it over) and leaks no slot', async () => {
    const { g } = rig;
    const load = new MixedLoad(g, {
      calls: CALLS,
      customers: rig.customers,
      inFlight: 200,
      timeoutMs: CALL_TIMEOUT_MS,
      runOf: (t) => rig.runs.get(t) as Run,
    });
    const started = Date.now();
    let phase = 'before the restart';
    // A line every 10 s, so a run that stalls shows where.
    const progress = setInterval(
      () =>
        console.info(
          `broker-restart: ${phase}, ${load.settled}/${CALLS} settled, ${rig.results.records.length} results on the topic, ${Math.round((Date.now() - started) / 1000)} s, the client's reader ${JSON.stringify(g.client.stats())}`,
        ),
      10_000,
    );
    const loading = load.run();

    await eventually(() => (load.settled >= CALLS * 0.3 ? true : undefined), 180_000, `${CALLS * 0.3} settled calls`);
    const settledAtStop = load.settled;
    phase = 'stopping the broker';
    const stopMs = await broker.stop();
    phase = 'starting the broker';
    const startMs = await broker.start();
    phase = 'after the restart';
    const settledAtStart = load.settled;

    await loading.finally(() => clearInterval(progress));
    const loadMs = Date.now() - started;
    await awaitLateAnswers(load, rig.results, 60_000);
    await rig.results.caughtUp(60_000);
    await rig.handoffs.caughtUp(60_000);
    const slotsInUse = await slotsHeld(g, slotScopes(rig), RIG.leaseMs + 2_000);
    const { figures, examples } = await auditLoad(g, load, rig.customers, rig.results, rig.handoffs, slotsInUse);
    const publishErrors = [
      ...new Set([...load.calls.values()].flatMap((c) => (c.publishError === undefined ? [] : [c.publishError.slice(0, 120)]))),
    ];
    console.info(
      summaryLine('broker-restart', figures, {
        'broker stopped after': `${settledAtStop} settled`,
        'down took ms': stopMs,
        'up took ms': startMs,
        'settled while down': settledAtStart - settledAtStop,
        'load ms': loadMs,
        'publish errors': publishErrors,
        'publishes sent again': g.client.stats().publishRetries,
      }),
    );

    // Where any lost command got to, so a failure names the stage that dropped it.
    if (examples.lost.length > 0) {
      const trail = await lostTrail(
        g,
        examples.lost.map((e) => e.split(' ')[0] ?? e),
      ).catch((error: unknown) => `unavailable: ${String(error)}`);
      console.info(`broker-restart: lost commands' trail ${JSON.stringify(trail)}`);
    }

    expect(figures.commands).toBe(CALLS);
    expect(figures.accepted + figures.notAccepted).toBe(CALLS);
    // The client sends a command again under its command_id until the broker takes it (within the
    // call's deadline), and the boundary answers that id once: no call is left unpublished.
    expect(figures.notAccepted, `calls whose publish failed for good: ${publishErrors.join('; ')}`).toBe(0);
    // The client's reader goes on after the restart from the last answer it read: none published
    // meanwhile is missed, so no call outlives its deadline (the broker is away for seconds).
    expect(figures.clientTimeouts, 'calls the client stopped waiting for').toBe(0);
    expect(examples.lost, 'accepted commands with no terminal result and no handoff').toEqual([]);
    expect(examples.conflicting, 'commands with two different terminal results').toEqual([]);
    expect(examples.repeatedPreviews, 'previews that made a second proposal').toEqual([]);
    expect(examples.answerMismatches, 'client answers that differ from the topic').toEqual([]);
    expect(examples.appliedTwice, 'customers changed twice').toEqual([]);
    // Every call reached the customers service with a valid assertion of its own, a re-sent write too.
    expect(examples.refusedCalls, 'calls the system of record refused').toEqual([]);
    expect(examples.reusedAssertions, 'writes re-sent with an assertion already presented').toEqual([]);
    expect(examples.contradictions, 'customers whose version contradicts the answer').toEqual([]);
    expect(figures.applied).toBe(figures.appliedKeys);
    expect(figures.applied).toBeGreaterThan(0);
    // Answers are successes or typed refusals (a tool may time out under load); never anything else.
    expect(Object.keys(figures.codes).filter((c) => c !== 'ok' && !isErrorCode(c))).toEqual([]);
    expect(figures.handoffs).toBeGreaterThanOrEqual(figures.codes['OUTCOME_UNKNOWN'] ?? 0);
    expect(figures.slotsInUse).toBe(0);
    expect(rig.results.undecodable).toBe(0);
  }, 420_000);
});
