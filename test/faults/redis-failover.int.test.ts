import { afterAll, beforeAll, describe, it } from 'vitest';
import { awaitFailover, killRedisMaster, redisHaDown, redisHaUp, redisMasters, restartRedisNode } from '../support/cluster-control.js';
import { startFaultRig } from '../support/fault-rig.js';
import type { FaultRig } from '../support/fault-rig.js';
import { expectNothingLostOrTwice, runUnderFault } from '../support/fault-run.js';
import { eventually } from '../support/stack.js';

// The stack's opt-in Redis Cluster of three masters, each with a replica (redis-ha): a master killed
// with -9 is replaced by its replica within seconds. Replication is asynchronous, so what the
// master acknowledged in its last moments may never have reached the replica.
describe('kill -9 of a Redis master, and its failover, during 5,000 calls', () => {
  let rig: FaultRig;

  beforeAll(async () => {
    rig = await startFaultRig('rfailover', { redisUrl: await redisHaUp() });
  }, 180_000);
  afterAll(async () => {
    await rig.stop();
    await redisHaDown();
  }, 180_000);

  it('promotes the replica, and loses, repeats and leaks nothing', async () => {
    const outcome = await runUnderFault(rig, {
      name: 'redis-failover',
      fault: async (load, phase) => {
        const [victim] = await redisMasters();
        if (victim === undefined) throw new Error('redis-ha has no master');
        phase(`killing the master on ${victim}`);
        const killedAt = Date.now();
        await killRedisMaster(victim);
        const promoted = await awaitFailover(victim);
        const failoverMs = Date.now() - killedAt;
        const settledAtFailover = load.settled;
        phase(`${promoted} promoted`);
        await eventually(() => (load.settled >= settledAtFailover + 500 ? true : undefined), 120_000, '500 calls after the failover');
        phase(`restarting ${victim} as a replica`);
        const restartMs = await restartRedisNode(victim);
        return { 'killed master': victim, promoted, 'failover after ms': failoverMs, 'restart took ms': restartMs };
      },
    });
    expectNothingLostOrTwice(outcome);
  }, 600_000);
});
