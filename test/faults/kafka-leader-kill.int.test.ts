import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventsConfig } from '@gatehouse/events';
import { deleteClusterTopics, kafkaClusterDown, killPartitionLeader, onKafkaCluster, startBroker } from '../support/cluster-control.js';
import { startFaultRig } from '../support/fault-rig.js';
import type { FaultRig } from '../support/fault-rig.js';
import { expectNothingLostOrTwice, runUnderFault } from '../support/fault-run.js';
import { config, eventually } from '../support/stack.js';

// The stack's opt-in three-node KRaft cluster (deploy/local/stack-kafka-cluster.mjs): every topic
// with three replicas, two of which must hold a record before it counts as written
// (min.insync.replicas 2, the brokers' default), as a production cluster runs.
let events: EventsConfig;

beforeAll(async () => {
  events = await onKafkaCluster(config);
}, 240_000);
afterAll(async () => {
  await kafkaClusterDown();
}, 120_000);

describe.each(['execute', 'results'] as const)('kill -9 of the broker leading a partition of %s during 5,000 calls', (role) => {
  let rig: FaultRig;

  beforeAll(async () => {
    rig = await startFaultRig(`kleader-${role}`, { events });
  }, 180_000);
  afterAll(async () => {
    await rig.stop();
    await deleteClusterTopics(rig.g.kafka, rig.g.topicPrefix);
  }, 180_000);

  it('moves the partition to an in-sync replica, and loses, repeats and leaks nothing', async () => {
    const topic = rig.g.topics[role];
    const outcome = await runUnderFault(rig, {
      name: `kafka-leader-kill (${role})`,
      fault: async (load, phase) => {
        phase(`killing the broker leading ${role}/0`);
        const { before, after, electedMs } = await killPartitionLeader(topic, 0);
        expect(before.isr).toHaveLength(3);
        // The load goes on with one broker down, then the broker comes back and catches up.
        const settledAtElection = load.settled;
        phase(`broker ${before.leader} down`);
        await eventually(() => (load.settled >= settledAtElection + 500 ? true : undefined), 120_000, '500 calls with a broker down');
        phase(`starting broker ${before.leader}`);
        const backInSyncMs = await startBroker(before.leader);
        return {
          'killed broker': before.leader,
          'new leader': after.leader,
          'new leader after ms': electedMs,
          'isr while down': after.isr,
          'back in every isr after ms': backInSyncMs,
        };
      },
    });
    expectNothingLostOrTwice(outcome);
  }, 600_000);
});
