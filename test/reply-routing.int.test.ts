import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createClient } from '@gatehouse/client';
import type { GatehouseClient } from '@gatehouse/client';
import { DLQ_HEADER, dlqTopicOf, EventPublisher } from '@gatehouse/events';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse, RegisteredRun } from './support/gatehouse.js';
import { recordResults } from './support/results.js';
import type { ResultLog } from './support/results.js';
import { TEST_KEY_RING } from './support/signing.js';
import { config, eventually, logger, readRaw } from './support/stack.js';

const CLIENTS = 20;
const CALLS_EACH = 500;
const IN_FLIGHT_EACH = 25;

// Every answer goes to the partition of the results topic its caller reads, so an agent-runtime
// instance reads its own answers rather than every tenant's, while a downstream service still
// reads them all.
describe('answers go to the instance that asked', () => {
  let g: Gatehouse;
  let everything: ResultLog;
  const clients: GatehouseClient[] = [];

  beforeAll(async () => {
    g = await startGatehouse('replies', { executors: 1 });
    everything = await recordResults(g);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await everything?.stop();
    await g?.stop();
  });

  const newClient = async (replyPartition?: number): Promise<GatehouseClient> => {
    const client = await createClient({
      config,
      topics: g.topics,
      controlUrl: g.policies[0]?.url ?? '',
      logger,
      resultKeys: TEST_KEY_RING,
      ...(replyPartition === undefined ? {} : { replyPartition }),
    });
    clients.push(client);
    return client;
  };

  it(`${CLIENTS} clients × ${CALLS_EACH} calls: each reads its own answers, not everyone's`, async () => {
    const fleet: GatehouseClient[] = [];
    // Where a run that stalls stands, every 10 s: the stage, and each client's calls settled.
    let stage = 'starting clients';
    const settled = Array.from({ length: CLIENTS }, () => 0);
    const progress = setInterval(() => {
      const publishRetries = fleet.map((c) => c.stats().publishRetries).join(',');
      console.info(`reply routing: ${stage}; clients ${fleet.length}; settled ${settled.join(',')}; publish retries ${publishRetries}`);
    }, 10_000);
    onTestFinished(() => clearInterval(progress));
    // One after another, as instances of a deployment start: each picks the partition fewest read.
    for (let i = 0; i < CLIENTS; i += 1) fleet.push(await newClient());
    stage = 'registering runs';
    const partitions = fleet.map((c) => c.stats().replyPartition);
    const startedAt = everything.all.length;

    // A run per instance, as each agent-runtime instance serves its own runs (and its own rate limits).
    const runs = await Promise.all(fleet.map(() => g.createRun('support-agent')));
    const calls = async (client: GatehouseClient, index: number): Promise<number> => {
      const run = runs[index] as RegisteredRun;
      let ok = 0;
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < CALLS_EACH) {
          next += 1;
          const result = await client.call(
            'get_customer.v1',
            { customer_id: 'C-1842' },
            { runId: run.run_id, runKey: run.run_key, tenant: run.tenant, timeoutMs: 60_000 },
          );
          if (result.ok) ok += 1;
          settled[index] = (settled[index] ?? 0) + 1;
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT_EACH }, worker));
      return ok;
    };
    stage = 'calling';
    const before = fleet.map((c) => c.stats().recordsRead);
    const answered = await Promise.all(fleet.map(calls));
    stage = 'every call answered; waiting for the topic';
    const read = fleet.map((c, i) => c.stats().recordsRead - (before[i] ?? 0));
    await eventually(
      () => (everything.all.length - startedAt >= CLIENTS * CALLS_EACH ? true : undefined),
      60_000,
      'every result on the topic',
    );
    const total = everything.all.length - startedAt;
    const ratios = read.map((n) => n / CALLS_EACH);
    console.info(
      `reply routing: ${CLIENTS} clients × ${CALLS_EACH} calls; results on the topic ${total}; ` +
        `records each client read min/max ${Math.min(...read)}/${Math.max(...read)} (×${Math.max(...ratios).toFixed(2)} its own); ` +
        `a reader of every partition (each client before routing) read ${total}; partitions ${partitions.join(',')}`,
    );

    expect(answered).toEqual(fleet.map(() => CALLS_EACH));
    expect(new Set(partitions).size, 'instances started one after another share no partition').toBe(CLIENTS);
    for (const ratio of ratios) expect(ratio).toBeLessThanOrEqual(2);
    // The downstream view is whole: every answer is on the topic, whichever partition it went to.
    expect(total).toBe(CLIENTS * CALLS_EACH);
    await Promise.all(fleet.map((c) => c.close()));
    clients.length = 0;
  }, 240_000);

  it('routes answers to the partition an instance names, and dead-letters a result it cannot decode', async () => {
    // A partition no other instance reads, so exactly one reader meets the bad record.
    const mine = g.client.stats().replyPartition === 5 ? 6 : 5;
    const client = await newClient(mine);
    const run = await g.createRun('support-agent');
    expect(client.stats().replyPartition).toBe(mine);
    const result = await client.call(
      'get_customer.v1',
      { customer_id: 'C-1842' },
      { runId: run.run_id, runKey: run.run_key, tenant: run.tenant },
    );
    expect(result.ok).toBe(true);
    await eventually(() => (everything.of(result.commandId).length === 1 ? true : undefined), 20_000, 'the answer on the topic');
    expect(everything.of(result.commandId)[0]?.partition).toBe(mine);

    const garbage = Buffer.from('not an Avro result');
    const publisher = await EventPublisher.connect(g.kafka, g.serde);
    try {
      await publisher.sendRaw(g.topics.results, [{ partition: mine, key: 'x', value: garbage }]);
    } finally {
      await publisher.disconnect();
    }
    await eventually(() => (client.stats().deadLettered === 1 ? true : undefined), 20_000, 'the undecodable result dead-lettered');
    const [dead] = await readRaw(g.kafka, dlqTopicOf(g.topics.results), 1);
    expect(dead?.value?.equals(garbage)).toBe(true);
    expect(dead?.headers?.[DLQ_HEADER.originPartition]?.toString()).toBe(String(mine));
  });

  it('refuses a reply partition the results topic does not have', async () => {
    await expect(newClient(10_000)).rejects.toThrow(/has no partition 10000/);
  });
});
