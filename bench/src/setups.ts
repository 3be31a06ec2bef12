import type { Redis } from '@gatehouse/state';
import { benchCatalog } from './bench-catalog.js';
import type { Child } from './child-process.js';
import { startDbosAnchor } from './anchors/dbos.js';
import { startRestateAnchor } from './anchors/restate.js';
import { DriverProcess } from './driver-protocol.js';
import { commandOf, ForeignProcess } from './foreign-process.js';
import type { DriverSetup } from './driver-protocol.js';
import { issueMcpTokens, startBenchFrontDoor } from './front-door.js';
import { startBenchGatehouse } from './gatehouse.js';
import type { OtlpSink } from './otlp-sink.js';
import { Setup } from './plan.js';
import type { BenchSettings } from './plan.js';
import { startPlatformaticRelay } from './relay-platformatic.js';
import { startRelay } from './relay.js';
import { config, freshTopics, registerRuns } from './stack.js';
import type { ArmTopics, BenchRun } from './stack.js';
import type { BenchKafka } from './kafkajs-client.js';

/** A service process of a setup, sampled around each measured window. */
export interface ServiceProcess {
  /** A Gatehouse service, or one of an anchor's processes (its server, its SDK's endpoint, its database's backends). */
  readonly role: 'policy' | 'executor' | 'anchor';
  readonly child: Pick<Child, 'sample' | 'signal'>;
}

/** A system under test, started once and kept running across rounds, with its driver process. */
export interface RunningSetup {
  readonly setup: Setup;
  readonly topicPrefix: string;
  readonly redisPrefix: string | undefined;
  readonly driver: DriverProcess;
  /** Its policy service and executors (none for the relays, which run in the bench process). */
  readonly services: readonly ServiceProcess[];
  /** Peak resident set of each executor process so far (VmHWM), in MiB. */
  executorPeakRssMiB(): number[];
  /**
   * Stops the setup's processes (SIGSTOP) and its in-process consumers while another setup is
   * measured, so an arm's figures do not depend on which other arms exist.
   */
  pause(): void;
  /** Lets it go on; true when it was paused (the caller then warms it up again). */
  resume(): boolean;
  stop(): Promise<void>;
}

/**
 * Pausing for a setup: its child processes stopped and continued by signal, plus what runs in the
 * bench process (a relay's consumers) paused and resumed in place.
 */
function pausing(
  children: () => readonly Pick<Child, 'signal'>[],
  inProcess?: { pause(): void; resume(): void },
): Pick<RunningSetup, 'pause' | 'resume'> {
  let paused = false;
  return {
    pause: () => {
      if (paused) return;
      paused = true;
      inProcess?.pause();
      for (const child of children()) child.signal('SIGSTOP');
    },
    resume: () => {
      if (!paused) return false;
      paused = false;
      for (const child of children()) child.signal('SIGCONT');
      inProcess?.resume();
      return true;
    },
  };
}

/** What every setup is started with. */
export interface SetupContext {
  readonly kafka: BenchKafka;
  /** The bench process's services connection (arm m's front door uses it). */
  readonly redis: Redis;
  readonly settings: BenchSettings;
  /** The OTLP receiver of the tracing arm, when it runs. */
  readonly sink: OtlpSink | undefined;
}

/** Stand-in runs for the relays: no policy checks them; they only key records as Gatehouse's do. */
function relayRuns(count: number): BenchRun[] {
  return Array.from({ length: count }, (_, i) => ({ runId: `run_relay_${i}`, tenant: `bench-tenant-${String(i).padStart(3, '0')}` }));
}

/** Provisions the setup's fresh topics; one setup at a time, as concurrent creations trip kafkajs' metadata. */
export async function provisionSetup(setup: Setup, kafka: BenchKafka): Promise<ArmTopics> {
  return freshTopics(kafka, setup);
}

/**
 * The environment of a setup's processes: OTLP export on for the tracing arm, pointed at the bench's
 * sink, and off (the variable removed) for every other arm, whatever the bench was started with.
 */
function envOf(setup: Setup, sink: OtlpSink | undefined): Record<string, string | undefined> {
  return { OTEL_EXPORTER_OTLP_ENDPOINT: setup === Setup.gatehouseTraced ? sink?.endpoint : undefined };
}

/** Starts a setup's driver process; stops `others` (already started) if it fails. */
async function startDriver(
  setup: Setup,
  driverSetup: DriverSetup,
  env: Record<string, string | undefined>,
  others: () => Promise<void>,
): Promise<DriverProcess> {
  try {
    return await DriverProcess.start(`${setup} driver`, driverSetup, env);
  } catch (error) {
    await others();
    throw error;
  }
}

/** Whether a setup is an anchor: no topics, no Gatehouse, its own processes. */
export function isAnchor(setup: Setup): setup is typeof Setup.restate | typeof Setup.dbos {
  return setup === Setup.restate || setup === Setup.dbos;
}

/**
 * An anchor and its driver (over HTTP). The anchor's processes are sampled from /proc; all are
 * paused between its turns but a database's own backends, which sit idle when nothing calls.
 */
export async function startAnchorSetup(setup: typeof Setup.restate | typeof Setup.dbos): Promise<RunningSetup> {
  const anchor = setup === Setup.restate ? await startRestateAnchor() : await startDbosAnchor();
  const processes = anchor.pids.map((pid) => {
    const command = commandOf(pid);
    return new ForeignProcess(`${anchor.name} ${command}`, pid, command !== 'postgres');
  });
  const driver = await startDriver(setup, { kind: 'http', readUrl: anchor.readUrl, writeUrl: anchor.writeUrl }, {}, () => anchor.stop());
  return {
    setup,
    topicPrefix: '',
    redisPrefix: undefined,
    driver,
    services: processes.map((child) => ({ role: 'anchor', child })),
    executorPeakRssMiB: () => [],
    ...pausing(() => [driver.child, ...processes]),
    stop: async () => {
      await driver.stop();
      await anchor.stop();
    },
  };
}

export async function startSetup(setup: Setup, arm: ArmTopics, context: SetupContext): Promise<RunningSetup> {
  const { kafka, redis, settings, sink } = context;
  const capabilities = benchCatalog()
    .catalog.tools()
    .map((t) => t.address);
  const env = envOf(setup, sink);
  if (setup === Setup.gatehouseTraced && sink === undefined) throw new Error('the tracing arm needs the OTLP sink');

  if (setup === Setup.relayRaw || setup === Setup.relayAvro || setup === Setup.relayPlatformatic) {
    // The relays run in the bench process; their driver in a process of its own.
    const relay =
      setup === Setup.relayPlatformatic
        ? await startPlatformaticRelay(arm.topics, `${arm.prefix}relay`)
        : await startRelay(kafka, arm.serde, setup === Setup.relayRaw ? 'raw' : 'avro', `${arm.prefix}relay`);
    await relay.joined;
    const driverSetup: DriverSetup = {
      kind: 'kafka',
      config,
      topicPrefix: arm.prefix,
      runs: relayRuns(settings.runs),
      answers: setup === Setup.relayAvro ? 'results' : 'commands',
    };
    const driver = await startDriver(setup, driverSetup, env, () => relay.stop());
    return {
      setup,
      topicPrefix: arm.prefix,
      redisPrefix: undefined,
      driver,
      services: [],
      executorPeakRssMiB: () => [],
      ...pausing(() => [driver.child], relay),
      stop: async () => {
        await driver.stop();
        await relay.stop();
      },
    };
  }

  const processes = setup === Setup.scale1 ? 1 : setup === Setup.scale2 ? 2 : setup === Setup.scale3 ? 3 : 0;
  const gatehouse = await startBenchGatehouse(kafka, arm, {
    executors: Math.max(1, processes),
    ...(processes > 0 ? { executorConcurrency: settings.scaleConcurrency } : {}),
    env,
  });
  const services: ServiceProcess[] = [
    { role: 'policy', child: gatehouse.policy },
    ...gatehouse.executors.map((child) => ({ role: 'executor' as const, child })),
  ];
  const common = {
    setup,
    topicPrefix: arm.prefix,
    redisPrefix: gatehouse.redisPrefix,
    services,
    executorPeakRssMiB: () => gatehouse.executorPeakRssMiB(),
  };
  let runs: BenchRun[];
  try {
    runs = await registerRuns(redis, gatehouse.redisPrefix, capabilities, settings.runs);
  } catch (error) {
    await gatehouse.stop();
    throw error;
  }

  if (setup === Setup.gatehouseMcp || setup === Setup.gatehouseMcpEnvelope) {
    // Arm (m): (c)'s Gatehouse behind the MCP front door, which runs in the bench process; the MCP
    // clients, one per run with its token, in the driver process.
    const frontDoor = await startBenchFrontDoor(arm, redis, gatehouse.redisPrefix);
    const stopServices = async () => {
      await frontDoor.stop();
      await gatehouse.stop();
    };
    let tokens: string[];
    try {
      tokens = await issueMcpTokens(redis, gatehouse.redisPrefix, runs);
    } catch (error) {
      await stopServices();
      throw error;
    }
    const driver = await startDriver(
      setup,
      { kind: 'mcp', url: frontDoor.url, tokens, era: setup === Setup.gatehouseMcpEnvelope ? 'envelope' : 'handshake' },
      env,
      stopServices,
    );
    return {
      ...common,
      driver,
      // The front door runs in the bench process and is not paused: idle, it only waits on its reply consumer's fetch.
      ...pausing(() => [driver.child, ...services.map((s) => s.child)]),
      stop: async () => {
        await driver.stop();
        await stopServices();
      },
    };
  }

  const driver = await startDriver(setup, { kind: 'kafka', config, topicPrefix: arm.prefix, runs, answers: 'results' }, env, () =>
    gatehouse.stop(),
  );
  return {
    ...common,
    driver,
    ...pausing(() => [driver.child, ...services.map((s) => s.child)]),
    stop: async () => {
      await driver.stop();
      await gatehouse.stop();
    },
  };
}

/** Deletes the topics of the bench's setups, so runs do not accumulate on the broker. */
export async function deleteTopics(kafka: BenchKafka, prefixes: readonly string[]): Promise<void> {
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
