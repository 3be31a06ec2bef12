import type { Redis } from '@gatehouse/state';
import type { Kafka } from 'kafkajs';
import { benchCatalog } from './bench-catalog.js';
import type { DriverThread } from './driver-protocol.js';
import { ExecutorFleet } from './executor-fleet.js';
import { issueMcpTokens, startBenchFrontDoor } from './front-door.js';
import { startBenchGatehouse } from './gatehouse.js';
import { Setup } from './plan.js';
import type { BenchSettings } from './plan.js';
import { startPlatformaticRelay } from './relay-platformatic.js';
import { startRelay } from './relay.js';
import { config, freshTopics, registerRuns } from './stack.js';
import type { ArmTopics, BenchRun } from './stack.js';

/** A system under test, started once and kept running across rounds, with its driver. */
export interface RunningSetup {
  readonly setup: Setup;
  readonly topicPrefix: string;
  readonly redisPrefix: string | undefined;
  /** Executor processes (arm e), for their peak RSS. */
  readonly fleet: ExecutorFleet | undefined;
  stop(): Promise<void>;
}

/** Stand-in runs for the relays: no policy checks them; they only key records as Gatehouse's do. */
function relayRuns(count: number): BenchRun[] {
  return Array.from({ length: count }, (_, i) => ({ runId: `run_relay_${i}`, tenant: `bench-tenant-${String(i).padStart(3, '0')}` }));
}

/** Provisions the setup's fresh topics; one setup at a time, as concurrent creations trip kafkajs' metadata. */
export async function provisionSetup(setup: Setup, kafka: Kafka): Promise<ArmTopics> {
  return freshTopics(kafka, setup);
}

export async function startSetup(setup: Setup, arm: ArmTopics, kafka: Kafka, redis: Redis, driver: DriverThread, settings: BenchSettings): Promise<RunningSetup> {
  const capabilities = benchCatalog().catalog.tools().map((t) => t.address);

  if (setup === Setup.relayRaw || setup === Setup.relayAvro || setup === Setup.relayPlatformatic) {
    const relay =
      setup === Setup.relayPlatformatic
        ? await startPlatformaticRelay(arm.topics, `${arm.prefix}relay`)
        : await startRelay(kafka, arm.serde, setup === Setup.relayRaw ? 'raw' : 'avro', `${arm.prefix}relay`);
    await relay.joined;
    await driver.start(setup, { kind: 'kafka', config, topicPrefix: arm.prefix, runs: relayRuns(settings.runs), answers: setup === Setup.relayAvro ? 'results' : 'commands' });
    return {
      setup,
      topicPrefix: arm.prefix,
      redisPrefix: undefined,
      fleet: undefined,
      stop: async () => {
        await driver.stop(setup);
        await relay.stop();
      },
    };
  }

  const processes = setup === Setup.scale1 ? 1 : setup === Setup.scale2 ? 2 : setup === Setup.scale3 ? 3 : 0;
  const gatehouse = await startBenchGatehouse(kafka, arm, redis, { inProcessExecutors: processes === 0 ? 1 : 0 });
  let fleet: ExecutorFleet | undefined;
  if (processes > 0) {
    fleet = new ExecutorFleet(kafka, {
      topicPrefix: arm.prefix,
      redisPrefix: gatehouse.redisPrefix,
      groupId: gatehouse.executorGroupId,
      executeTopic: arm.topics.execute,
      concurrency: settings.scaleConcurrency,
    });
    await fleet.start(processes);
  }
  const runs = await registerRuns(redis, gatehouse.redisPrefix, capabilities, settings.runs);

  if (setup === Setup.gatehouseMcp) {
    // Arm (m): (c)'s Gatehouse behind the MCP front door, both in this process; the MCP clients,
    // one per run with its token, on the driver thread.
    const frontDoor = await startBenchFrontDoor(arm, redis, gatehouse.redisPrefix);
    await driver.start(setup, { kind: 'mcp', url: frontDoor.url, tokens: await issueMcpTokens(redis, gatehouse.redisPrefix, runs) });
    return {
      setup,
      topicPrefix: arm.prefix,
      redisPrefix: gatehouse.redisPrefix,
      fleet: undefined,
      stop: async () => {
        await driver.stop(setup);
        await frontDoor.stop();
        await gatehouse.stop();
      },
    };
  }

  await driver.start(setup, { kind: 'kafka', config, topicPrefix: arm.prefix, runs, answers: 'results' });
  const running = fleet;
  return {
    setup,
    topicPrefix: arm.prefix,
    redisPrefix: gatehouse.redisPrefix,
    fleet,
    stop: async () => {
      await driver.stop(setup);
      await running?.stop();
      await gatehouse.stop();
    },
  };
}

/** Deletes the topics of the bench's setups, so runs do not accumulate on the broker. */
export async function deleteTopics(kafka: Kafka, prefixes: readonly string[]): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((t) => prefixes.some((p) => t.startsWith(p)));
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 });
  } finally {
    await admin.disconnect();
  }
}

/** Deletes the bench's Redis keys (runs, idempotency records, proposals, grants). */
export async function deleteKeys(redis: Redis, prefixes: readonly string[]): Promise<void> {
  for (const prefix of prefixes) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1_000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  }
}
