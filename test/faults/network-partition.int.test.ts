import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { redisUrlFromEnv } from '@gatehouse/state';
import { RIG, startFaultRig } from '../support/fault-rig.js';
import type { FaultRig } from '../support/fault-rig.js';
import { expectNothingLostOrTwice, runUnderFault } from '../support/fault-run.js';
import { makeNetns } from '../support/netns.js';
import type { Netns } from '../support/netns.js';
import { eventually } from '../support/stack.js';

const hostPort = (url: string): { host: string; port: number } => {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port) };
};

/** `url` with its host and port replaced by `address` (host:port). */
const through = (url: string, address: string): string => url.replace(new URL(url).host, address);

// The second executor runs in a network namespace of the test's own, reaching Redis over one veth
// link and Kafka, the registry and the system of record over another. A link set down is a
// partition: packets dropped, connections stalled, nothing refused.
describe('an executor cut off from Redis for longer than its lease, then from Kafka, during 5,000 calls', () => {
  let rig: FaultRig;
  let netns: Netns | undefined;

  beforeAll(async () => {
    rig = await startFaultRig('partition', {
      executors: async (g) => {
        const registry = hostPort(g.events.registryUrl);
        const customers = hostPort(g.customers.url);
        const [broker = ''] = g.events.brokers;
        const ns = await makeNetns(100 + Math.floor(Math.random() * 150), {
          redis: hostPort(redisUrlFromEnv()),
          kafka: hostPort(`tcp://${broker}`),
          others: [registry, customers],
        });
        netns = ns;
        return [
          {},
          {
            via: ns.via,
            env: {
              REDIS_URL: through(redisUrlFromEnv(), ns.redis),
              KAFKA_BROKERS: ns.kafka,
              SCHEMA_REGISTRY_URL: through(g.events.registryUrl, ns.other(registry)),
              CUSTOMERS_URL: through(g.customers.url, ns.other(customers)),
            },
          },
        ];
      },
    });
  }, 180_000);
  afterAll(async () => {
    await rig?.stop();
    await netns?.remove();
  }, 180_000);

  it('takes over what the cut executor held, once, and loses, repeats and leaks nothing', async () => {
    const ns = netns as Netns;
    const outcome = await runUnderFault(rig, {
      name: 'network-partition',
      fault: async (load, phase) => {
        const settledBefore = load.settled;
        phase('exec-b cut from Redis');
        const redisCutAt = Date.now();
        await ns.cut('redis');
        // The fault itself: three leases of the cut executor run out while the other one serves.
        await delay(RIG.leaseMs * 3);
        await ns.heal('redis');
        const redisCutMs = Date.now() - redisCutAt;
        phase('Redis link healed');
        await eventually(() => (load.settled >= settledBefore + 500 ? true : undefined), 120_000, '500 calls after the Redis cut');
        const settledMid = load.settled;
        phase('exec-b cut from Kafka');
        const kafkaCutAt = Date.now();
        await ns.cut('kafka');
        // Until its session runs out and the other executor holds every partition.
        await rig.executors.awaitMembers(1, 60_000);
        const rebalancedMs = Date.now() - kafkaCutAt;
        await ns.heal('kafka');
        phase('Kafka link healed');
        await rig.executors.awaitMembers(2, 120_000);
        await eventually(() => (load.settled >= settledMid + 500 ? true : undefined), 120_000, '500 calls after the Kafka cut');
        return { 'redis cut ms': redisCutMs, 'kafka cut until one member ms': rebalancedMs, 'kafka cut ms': Date.now() - kafkaCutAt };
      },
    });
    expectNothingLostOrTwice(outcome);
  }, 600_000);
});
