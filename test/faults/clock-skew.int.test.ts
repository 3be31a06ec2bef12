import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultRig } from '../support/fault-rig.js';
import type { FaultRig } from '../support/fault-rig.js';
import { expectNothingLostOrTwice, runUnderFault } from '../support/fault-run.js';
import { clockOff } from '../support/skewed-clock.js';

/** The offset to Redis' clock an executor said it found at start (its warning line), in ms. */
function offsetSaid(output: string): number | undefined {
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as { msg?: string; offset_ms?: number };
    if (entry.msg?.startsWith("this machine's clock is off Redis' clock") === true) return entry.offset_ms;
  }
  return undefined;
}

// Leases, slot leases and rate windows are judged inside Redis scripts, by Redis' clock. What an
// executor judges itself (a call's deadline, an approval's, proposal's or run's expiry, a call
// assertion's lifetime at the system of record) it judges by Redis' clock too, read at start and
// every 15 s: so an executor whose machine's clock is 30 s ahead or behind decides as the others do.
describe('two executors whose clocks are 30 s off, one ahead and one behind, during 2,000 calls', () => {
  let rig: FaultRig;

  beforeAll(async () => {
    rig = await startFaultRig('skew', { executors: () => Promise.resolve([{ env: clockOff(30) }, { env: clockOff(-30) }]) });
  }, 180_000);
  afterAll(async () => {
    await rig.stop();
  }, 180_000);

  it('answers every call by the deadlines and expiries others set, and loses, repeats and leaks nothing', async () => {
    const [ahead, behind] = rig.executors.processes;
    // Each knows how far off it is: Redis' clock is 30 s behind the first and 30 s ahead of the second.
    expect(offsetSaid(ahead?.output() ?? '')).toBeGreaterThan(-32_000);
    expect(offsetSaid(ahead?.output() ?? '')).toBeLessThan(-28_000);
    expect(offsetSaid(behind?.output() ?? '')).toBeGreaterThan(28_000);
    expect(offsetSaid(behind?.output() ?? '')).toBeLessThan(32_000);
    // Deadlines 20 s out: by its own clock the first executor would find each passed before it
    // started, and the second would mint call assertions the system of record finds expired.
    const outcome = await runUnderFault(rig, { name: 'clock-skew', calls: 2_000, timeoutMs: 20_000, fault: () => Promise.resolve({}) });
    expectNothingLostOrTwice(outcome);
    expect(outcome.figures.codes).toEqual({ ok: 2_000 });
  }, 600_000);
});
