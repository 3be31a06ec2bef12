import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventPublisher, EventSigner, generateSigningKey, KafkaAdmin, parseSigningKey } from '@gatehouse/events';
import type { EventsConfig, ToolResult } from '@gatehouse/events';
import { REPLY_PARTITION_HEADER } from '@gatehouse/telemetry';
import {
  killBroker,
  leaveKafkaCluster,
  onKafkaCluster,
  partitionLeader,
  startBroker,
  transactionCoordinatorOf,
} from '../support/cluster-control.js';
import { resultCommandsOn, servicePublishing } from '../support/results-reader.js';
import { sampleEvents } from '../support/sample-events.js';
import { config, freshTopics } from '../support/stack.js';
import type { TestTopics } from '../support/stack.js';

// A transactional publisher's commit goes to its transactional id's coordinator, a broker that may
// lead none of the partitions the transaction writes to. Killed while a commit is on its way, the
// coordinator takes an election (10–13 s) to come back on another broker: the publisher asks the
// commit again until the new coordinator answers for it, and the answer goes out once, whether the
// commit was made or the new coordinator aborted the transaction past its timeout and the batch
// went again. On the stack's three-node cluster (deploy/local/stack-kafka-cluster.mjs).
describe('kill -9 of the transaction coordinator while a commit is on its way', () => {
  const key = generateSigningKey('executor-coordinator-kill');
  let events: EventsConfig;
  let env: TestTopics;
  let admin: KafkaAdmin;
  let publisher: EventPublisher | undefined;
  let killed: number | undefined;

  const answer = (commandId: string): ToolResult => ({ ...sampleEvents.results, command_id: commandId, completed_at: Date.now() });
  const toPartition0 = { [REPLY_PARTITION_HEADER]: '0' };

  beforeAll(async () => {
    events = await onKafkaCluster(config);
    env = await freshTopics('coordinator-kill', 3, events);
    admin = await KafkaAdmin.connect(env.kafka);
  }, 240_000);

  afterAll(async () => {
    await publisher?.disconnect().catch(() => undefined);
    await admin?.close();
    if (killed !== undefined) await startBroker(killed);
    await leaveKafkaCluster(env && { kafka: env.kafka, prefix: env.topics.commands.slice(0, -'gatehouse.commands'.length) });
  }, 240_000);

  it('has a service publish its answers in transactions where the results topic is replicated, and nothing else', async () => {
    expect(await servicePublishing(events, env)).toEqual([true, true, false]);
  });

  it('asks the commit again until the next coordinator answers, and the answer is on the topic once', async () => {
    // An id whose first lane for results/0's leader has its coordinator on another broker: killing
    // it takes the coordinator away, not the partition's leader. After earlier kills one broker may
    // lead every partition of the transaction log until the brokers rebalance leadership (every
    // 5 minutes); then the coordinator is killed with the leader, and the commit waits for both.
    // A fresh cluster has no transaction log until a producer asks for a coordinator.
    const probe = await EventPublisher.connect(env.kafka, env.serde, undefined, {
      transactionalId: `${env.topics.results}.coordinator-probe`,
    });
    await probe.disconnect();
    const leader = await partitionLeader(env.topics.results, 0);
    const candidates = Array.from({ length: 40 }, (_, i) => `${env.topics.results}.coordinator-kill-${i}`);
    let id = candidates[0] as string;
    let coordinator = await transactionCoordinatorOf(`${id}~${leader}~0`);
    for (const candidate of candidates.slice(1)) {
      if (coordinator !== leader) break;
      id = candidate;
      coordinator = await transactionCoordinatorOf(`${id}~${leader}~0`);
    }
    expect(coordinator).toBeGreaterThan(0);
    const live = await EventPublisher.connect(env.kafka, env.serde, new EventSigner(parseSigningKey(key.signingKey)), {
      transactionalId: id,
      transactionTimeoutMs: 4_000,
    });
    publisher = live;
    // The lane's producer, made under its coordinator before the kill.
    const before = answer(`before-${Date.now()}`);
    await live.publish('results', before.run_id, before, toPartition0, () => Promise.resolve(true));

    // The claim is renewed inside the transaction; the coordinator dies right after, so the commit
    // goes to a broker that is gone.
    const stuck = answer(`coordinator-killed-${Date.now()}`);
    let asked = 0;
    await live.publish('results', stuck.run_id, stuck, toPartition0, async () => {
      asked += 1;
      if (asked === 1) {
        await killBroker(coordinator);
        killed = coordinator;
      }
      return true;
    });
    // Committed by the new coordinator (asked once), or aborted past its timeout and sent again (twice).
    expect([1, 2]).toContain(asked);

    // The publisher goes on, and a read_committed reader finds each answer once.
    const after = answer(`after-${Date.now()}`);
    await live.publish('results', after.run_id, after, toPartition0, () => Promise.resolve(true));
    const seen = await resultCommandsOn(env, admin, 0, 60_000);
    for (const commandId of [before.command_id, stuck.command_id, after.command_id]) {
      expect(
        seen.filter((c) => c === commandId),
        commandId,
      ).toHaveLength(1);
    }
  }, 180_000);
});
