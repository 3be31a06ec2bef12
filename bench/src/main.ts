// `npm run bench [-- --quick] [-- --only a,c]`: one run of every arm, interleaved round by round,
// a discarded warm-up round first; prints a table and writes bench/results/<timestamp>.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { LoadReport } from './driver.js';
import { brokerSettings, machine, versions } from './environment.js';
import { MCP_SETTINGS } from './front-door.js';
import { EXECUTOR_SETTINGS, POLICY_SETTINGS } from './gatehouse.js';
import { OtlpSink } from './otlp-sink.js';
import { cpuWindow, sampleSetup, sentBetween } from './process-cpu.js';
import type { CpuWindow } from './process-cpu.js';
import { settingsOf, variantsOf } from './plan.js';
import type { Setup } from './plan.js';
import { unavailableClients } from './relay-clients.js';
import { describeWindow, RedisCounter } from './redis-stats.js';
import type { RedisWindow } from './redis-stats.js';
import { anchorTargets } from './anchor-report.js';
import { renderTable, resultOf, targetsOf } from './report.js';
import type { TracingFigures } from './report.js';
import { deleteKeys, deleteTopics, isAnchor, provisionSetup, startAnchorSetup, startSetup } from './setups.js';
import type { RunningSetup } from './setups.js';
import { benchKafka, benchRedis, config } from './stack.js';

const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const started = Date.now();
const say = (line: string) => process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s] ${line}\n`);

// Before any producer exists (the driver and service processes inherit it): the default
// partitioner is the one Gatehouse uses; kafkajs would warn about it once per producer.
process.env['KAFKAJS_NO_PARTITIONER_WARNING'] = '1';

const settings = settingsOf(process.argv.slice(2));
const variants = variantsOf(settings);
if (variants.length === 0)
  throw new Error('no arm selected (--only takes a comma list of a, a2, b, c, t, m, m2, d, e, open, s, restate, dbos)');
// Arm (a′) measures the clients it can install; it names the others and why.
const unavailable = variants.some((v) => v.arm === 'a2') ? unavailableClients() : [];
for (const u of unavailable) say(`(a′) ${u.client}: ${u.reason}`);

const kafka = benchKafka('bench-main');
const redis = benchRedis('bench-main');
// Counts what the bench process's own services (arm m's front door) send on `redis`, and reads Redis' own statistics.
const redisCounter = RedisCounter.open(redis);
// The tracing arm's OTLP receiver, on loopback in this process.
const sink = variants.some((v) => v.arm === 't') ? await OtlpSink.start() : undefined;
const environment = { machine: machine(), loadAverageAtStart: loadavg(), versions: versions(), broker: await brokerSettings(kafka) };

const setups = new Map<Setup, RunningSetup>();
/** Topic prefixes of every provisioned setup, deleted at the end even when a setup failed to start. */
const topicPrefixes: string[] = [];
let cleaning: Promise<void> | undefined;
/** Stops every process the bench started and deletes its topics and keys; once, whoever asks first. */
const cleanUp = (): Promise<void> =>
  (cleaning ??= (async () => {
    for (const setup of setups.values()) {
      // A stopped process cannot answer the request to stop.
      setup.resume();
      await setup.stop().catch((error: unknown) => say(`stopping ${setup.setup}: ${String(error)}`));
    }
    await deleteTopics(kafka, topicPrefixes).catch((error: unknown) => say(`deleting topics: ${String(error)}`));
    await deleteKeys(
      redis,
      [...setups.values()].flatMap((s) => (s.redisPrefix === undefined ? [] : [s.redisPrefix])),
    );
    await sink?.close();
    await redisCounter.close();
    await redis.quit();
  })());
// Ctrl-C or a kill: the same clean-up as the end of a run (the child processes also exit on their own when this one is gone).
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    say(`${signal}: stopping the bench's processes, deleting its topics and keys`);
    void cleanUp().finally(() => process.exit(130));
  });
}
try {
  const wanted = [...new Set(variants.map((v) => v.setup))];
  say(`creating the topics of ${wanted.join(', ')}`);
  const arms = [];
  for (const setup of wanted) {
    if (isAnchor(setup)) continue;
    const topics = await provisionSetup(setup, kafka);
    topicPrefixes.push(topics.prefix);
    arms.push({ setup, topics });
  }
  // Then together: starting is mostly waiting (group joins, executor processes).
  say('starting the services and drivers');
  // Each kept as soon as it runs, so a stop (a failure, a signal) stops it.
  const starting = await Promise.allSettled([
    ...arms.map(async (a) => {
      const running = await startSetup(a.setup, a.topics, { kafka, redis, settings, sink });
      setups.set(running.setup, running);
    }),
    // The anchors, one after the other: each starts a server and registers its endpoint with it.
    (async () => {
      for (const setup of wanted.filter(isAnchor)) setups.set(setup, await startAnchorSetup(setup));
    })(),
  ]);
  const failed = starting.find((o) => o.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  // From here on, only the setup being measured runs.
  for (const setup of setups.values()) setup.pause();

  // Nothing in flight: what Redis runs that no call causes (any window holds it too); 0 expected.
  const redisIdle = await redisCounter.idle(1_000);
  if (Object.keys(redisIdle.ran).length > 0)
    say(
      `Redis ran commands with no call in flight (${JSON.stringify(redisIdle.ran)} in ${redisIdle.ms} ms): its per-call figures include them`,
    );

  const reps = new Map<string, LoadReport[]>(variants.map((v) => [v.id, []]));
  const redisWindows = new Map<string, RedisWindow[]>(variants.map((v) => [v.id, []]));
  const cpuWindows = new Map<string, CpuWindow[]>(variants.map((v) => [v.id, []]));
  /** Calls the tracing arm answered in every round, the warm-up included: the spans the sink receives are theirs. */
  let tracedCalls = 0;
  for (let round = 0; round <= settings.repetitions; round += 1) {
    const warmup = round === 0;
    say(warmup ? 'warm-up round (discarded)' : `round ${round} of ${settings.repetitions}`);
    for (const variant of variants) {
      const running = setups.get(variant.setup);
      if (running === undefined) throw new Error(`${variant.setup} is not running`);
      for (const other of setups.values()) if (other !== running) other.pause();
      // Back from a stop: a short discarded load lets its timers and connections catch up first.
      if (running.resume()) await running.driver.run({ ...variant.spec, durationMs: settings.resumeWarmupMs });
      const spec = warmup ? { ...variant.spec, durationMs: settings.warmupMs } : variant.spec;
      const before = warmup ? undefined : await redisCounter.mark();
      const sampledBefore = warmup ? undefined : await sampleSetup(running.services);
      const report = await running.driver.run(spec);
      const answered = report.ok + Object.values(report.errors).reduce((n, e) => n + e, 0);
      if (variant.arm === 't') tracedCalls += answered;
      let line = '';
      if (before !== undefined && sampledBefore !== undefined) {
        // CPU right as the load ends; the Redis window once Redis is quiet, with what the processes sent by then.
        const sampledAtEnd = await sampleSetup(running.services);
        const after = await redisCounter.mark();
        const sampledAfter = await sampleSetup(running.services);
        const window = redisCounter.window(before, after, answered, sentBetween(sampledBefore, sampledAfter));
        redisWindows.get(variant.id)?.push(window);
        const cpu = cpuWindow(running.services, sampledBefore, sampledAtEnd, report.cpu.userMs + report.cpu.systemMs, answered);
        cpuWindows.get(variant.id)?.push(cpu);
        line = `  ${describeWindow(window)}  ${describeCpu(cpu)}`;
      }
      // Not one answer: the stack is down or was restarted under the run; its figures would be noise.
      if (report.sent > 0 && report.unanswered === report.sent) {
        throw new Error(`${variant.id}: none of ${report.sent} calls was answered — is the stack up (npm run stack:status)?`);
      }
      if (!warmup) reps.get(variant.id)?.push(report);
      say(
        `  ${variant.id.padEnd(10)} ${report.throughput.toFixed(0).padStart(6)} calls/s  p50 ${report.latencyMs.p50} ms  p99 ${report.latencyMs.p99} ms${report.stageMediansMs === null ? '' : `  (to completion ${report.stageMediansMs.toCompletion} ms, back ${report.stageMediansMs.toClient} ms)`}${report.unanswered > 0 ? `  ${report.unanswered} unanswered` : ''}${line}`,
      );
    }
  }

  let tracing: TracingFigures | null = null;
  if (sink !== undefined) {
    // The exporters batch spans (5 s by default): wait until the last batch has come in.
    if (sink.received.requests > 0) await sink.untilQuiet(6_000, 15_000);
    tracing = { calls: tracedCalls, ...sink.received };
  }

  const rss = [...setups.values()].filter((s) => s.setup.startsWith('scale-')).flatMap((s) => s.executorPeakRssMiB());
  const peakRssMiB = rss.length === 0 ? null : Math.max(...rss);
  const results = variants.map((v) => resultOf(v, reps.get(v.id) ?? [], redisWindows.get(v.id) ?? [], cpuWindows.get(v.id) ?? []));
  const targets = [...targetsOf(results, peakRssMiB), ...anchorTargets(results)];

  const table = renderTable(results, targets, settings.repetitions, unavailable, redisIdle, tracing);
  process.stdout.write(`\n${table}\n`);
  // Only full runs are kept with the repository; a quick run's file goes where git ignores it.
  const dir = settings.quick ? `${RESULTS_DIR}quick/` : RESULTS_DIR;
  mkdirSync(dir, { recursive: true });
  const file = `${dir}${new Date(started).toISOString().replace(/[:.]/g, '-')}${settings.quick ? '-quick' : ''}.json`;
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        startedAt: new Date(started).toISOString(),
        durationS: Math.round((Date.now() - started) / 1000),
        environment: { ...environment, loadAverageAtEnd: loadavg() },
        settings: {
          ...settings,
          partitions: config.topicSettings.partitions,
          executor: EXECUTOR_SETTINGS,
          policy: POLICY_SETTINGS,
          mcp: { ...MCP_SETTINGS, clients: settings.runs },
          logLevel: process.env['BENCH_LOG_LEVEL'] ?? 'info',
        },
        executorPeakRssMiB: rss,
        redisIdle,
        tracing,
        unavailableClients: unavailable,
        targets,
        results,
        table,
      },
      (_key, value: unknown) => (typeof value === 'number' && !Number.isFinite(value) ? String(value) : value),
      2,
    )}\n`,
  );
  process.stdout.write(`\nresults: ${file}\n`);
} finally {
  await cleanUp();
}
/** One window's CPU in a progress line: `cpu/1k driver 310, bench 12, policy 420, exec 380`. */
function describeCpu(w: CpuWindow): string {
  if (w.calls === 0) return 'cpu/1k –';
  const k = (ms: number) => ((ms * 1000) / w.calls).toFixed(0);
  return `cpu ms/1k driver ${k(w.driverMs)}, bench ${k(w.benchMs)}${w.policyMs === null ? '' : `, policy ${k(w.policyMs)}`}${w.executorMs.length === 0 ? '' : `, exec ${w.executorMs.map(k).join('+')}`}`;
}

// kafkajs and ioredis keep timers for reconnects; the bench is done.
process.exit(0);
