import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  awaitFailover,
  killRedisMaster,
  leaveKafkaCluster,
  onKafkaCluster,
  redisHaDown,
  redisHaUp,
  redisMasters,
  restartRedisNode,
} from '../support/cluster-control.js';
import { startFaultRig } from '../support/fault-rig.js';
import type { FaultRig } from '../support/fault-rig.js';
import { expectNothingLostOrTwice, runUnderFault } from '../support/fault-run.js';
import type { Failover } from '../support/ledger-history.js';
import { config, eventually } from '../support/stack.js';

// The stack's opt-in Redis Cluster of three masters, each with a replica (redis-ha): a master killed
// with -9 is replaced by its replica within seconds. Replication is asynchronous, so what the
// master acknowledged in its last moments may never have reached the replica: every service runs with
// GATEHOUSE_REDIS_WAIT_REPLICAS=1, as a deployment on replicated Redis should. On the single broker
// the services publish answers plainly; on the stack's three-node Kafka cluster (every topic with
// three replicas) in transactions, each committed only while its claim's renewal holds, so a claim
// the failover lost is made again with its answer, and a subscriber counts one record per command.
const BROKERS = [
  { where: 'one broker', label: 'rfailover', cluster: false },
  { where: 'a three-node Kafka cluster', label: 'rfailover-cluster', cluster: true },
] as const;

describe.each(BROKERS)('kill -9 of a Redis master, and its failover, during 5,000 calls, on $where', ({ where, label, cluster }) => {
  let rig: FaultRig;

  beforeAll(async () => {
    const events = cluster ? await onKafkaCluster(config) : undefined;
    rig = await startFaultRig(label, {
      redisUrl: await redisHaUp(),
      redisBarrier: { replicas: 1, timeoutMs: 250 },
      ...(events === undefined ? {} : { events }),
    });
  }, 360_000);
  afterAll(async () => {
    // The Redis Cluster goes down even when the rig never started, or fails to stop: a node left
    // running holds its ports for the next run.
    try {
      await rig?.stop();
    } finally {
      try {
        await redisHaDown();
      } finally {
        if (cluster) await leaveKafkaCluster(rig && { kafka: rig.g.kafka, prefix: rig.g.topicPrefix });
      }
    }
  }, 180_000);

  it('promotes the replica, and loses, repeats and leaks nothing', async () => {
    let failover: Failover | undefined;
    const outcome = await runUnderFault(rig, {
      name: `redis-failover (${where})`,
      // A failover may take back a settlement, a renewal or a give-back no replica held yet (they do
      // not wait for one): the history is checked allowing that, and nothing a replica confirmed.
      failover: () => failover,
      fault: async (load, phase) => {
        const [victim] = await redisMasters();
        if (victim === undefined) throw new Error('redis-ha has no master');
        phase(`killing the master on ${victim}`);
        const killedAt = Date.now();
        await killRedisMaster(victim);
        const promoted = await awaitFailover(victim);
        failover = { killedAt, promotedAt: Date.now() };
        const failoverMs = Date.now() - killedAt;
        // The promoted master has no replica left, so the records that wait for one wait until the
        // old master is back as its replica: restarted at once, as an orchestrator would.
        phase(`${promoted} promoted; restarting ${victim} as its replica`);
        const restartMs = await restartRedisNode(victim);
        const settledAtRestart = load.settled;
        phase(`${victim} back as a replica`);
        await eventually(() => (load.settled >= settledAtRestart + 500 ? true : undefined), 120_000, '500 calls after the restart');
        return { 'killed master': victim, promoted, 'failover after ms': failoverMs, 'restart took ms': restartMs };
      },
    });
    expectNothingLostOrTwice(outcome);
  }, 600_000);
});
