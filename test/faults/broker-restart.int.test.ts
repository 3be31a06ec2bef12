import { afterAll, beforeAll, describe, it } from 'vitest';
import { startFaultRig } from '../support/fault-rig.js';
import type { FaultRig } from '../support/fault-rig.js';
import { expectNothingLostOrTwice, runUnderFault } from '../support/fault-run.js';
import { ownKafka } from '../support/stack-control.js';

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
    const outcome = await runUnderFault(rig, {
      name: 'broker-restart',
      fault: async (load, phase) => {
        phase('stopping the broker');
        const stopMs = await broker.stop();
        const settledAtStop = load.settled;
        phase('starting the broker');
        const startMs = await broker.start();
        return { 'down took ms': stopMs, 'up took ms': startMs, 'settled while down': load.settled - settledAtStop };
      },
    });
    // The client's reader goes on after the restart from the last answer it read: none published
    // meanwhile is missed, so no call outlives its deadline (the broker is away for seconds).
    expectNothingLostOrTwice(outcome);
  }, 420_000);
});
