// `npm run bench [-- --quick] [-- --only a,c]`: one run of every arm, interleaved round by round,
// a discarded warm-up round first; prints a table and writes bench/results/<timestamp>.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { DriverThread } from './driver-protocol.js';
import type { LoadReport } from './driver.js';
import { brokerSettings, machine, versions } from './environment.js';
import { MCP_SETTINGS } from './front-door.js';
import { EXECUTOR_SETTINGS, POLICY_SETTINGS } from './gatehouse.js';
import { settingsOf, variantsOf } from './plan.js';
import type { Setup } from './plan.js';
import { unavailableClients } from './relay-clients.js';
import { describeWindow, RedisCounter } from './redis-stats.js';
import type { RedisWindow } from './redis-stats.js';
import { renderTable, resultOf, targetsOf } from './report.js';
import { deleteKeys, deleteTopics, provisionSetup, startSetup } from './setups.js';
import type { RunningSetup } from './setups.js';
import { benchKafka, benchRedis, config } from './stack.js';

const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const started = Date.now();
const say = (line: string) => process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s] ${line}\n`);

// Before any producer exists (the driver thread and executor processes inherit it): the default
// partitioner is the one Gatehouse uses; kafkajs would warn about it once per producer.
process.env['KAFKAJS_NO_PARTITIONER_WARNING'] = '1';

const settings = settingsOf(process.argv.slice(2));
const variants = variantsOf(settings);
if (variants.length === 0) throw new Error('no arm selected (--only takes a comma list of a, a2, b, c, m, d, e, open)');
// Arm (a′) measures the clients it can install; it names the others and why.
const unavailable = variants.some((v) => v.arm === 'a2') ? unavailableClients() : [];
for (const u of unavailable) say(`(a′) ${u.client}: ${u.reason}`);

const kafka = benchKafka('bench-main');
const redis = benchRedis('bench-main');
// Counts what the in-process services send on `redis` (they all share it) and reads Redis' own statistics.
const redisCounter = RedisCounter.open(redis);
const driver = new DriverThread();
const environment = { machine: machine(), loadAverageAtStart: loadavg(), versions: versions(), broker: await brokerSettings(kafka) };

const setups = new Map<Setup, RunningSetup>();
/** Topic prefixes of every provisioned setup, deleted at the end even when a setup failed to start. */
const topicPrefixes: string[] = [];
try {
  const wanted = [...new Set(variants.map((v) => v.setup))];
  say(`creating the topics of ${wanted.join(', ')}`);
  const arms = [];
  for (const setup of wanted) {
    const topics = await provisionSetup(setup, kafka);
    topicPrefixes.push(topics.prefix);
    arms.push({ setup, topics });
  }
  // Then together: starting is mostly waiting (group joins, executor processes).
  say('starting the services and drivers');
  const starting = await Promise.allSettled(arms.map((a) => startSetup(a.setup, a.topics, kafka, redis, driver, settings)));
  for (const outcome of starting) if (outcome.status === 'fulfilled') setups.set(outcome.value.setup, outcome.value);
  const failed = starting.find((o) => o.status === 'rejected');
  if (failed !== undefined) throw failed.reason;

  // Nothing in flight: what Redis runs that no call causes (any window holds it too); 0 expected.
  const redisIdle = await redisCounter.idle(1_000);
  if (Object.keys(redisIdle.ran).length > 0) say(`Redis ran commands with no call in flight (${JSON.stringify(redisIdle.ran)} in ${redisIdle.ms} ms): its per-call figures include them`);

  const reps = new Map<string, LoadReport[]>(variants.map((v) => [v.id, []]));
  const redisWindows = new Map<string, RedisWindow[]>(variants.map((v) => [v.id, []]));
  for (let round = 0; round <= settings.repetitions; round += 1) {
    const warmup = round === 0;
    say(warmup ? 'warm-up round (discarded)' : `round ${round} of ${settings.repetitions}`);
    for (const variant of variants) {
      const spec = warmup ? { ...variant.spec, durationMs: settings.warmupMs } : variant.spec;
      const before = warmup ? undefined : await redisCounter.mark();
      const report = await driver.run(variant.setup, spec);
      let redisLine = '';
      if (before !== undefined) {
        // Executor processes (arm e) send on connections of their own: only Redis' count is whole.
        const partial = setups.get(variant.setup)?.fleet !== undefined;
        const answered = report.ok + Object.values(report.errors).reduce((n, e) => n + e, 0);
        const window = redisCounter.window(before, await redisCounter.mark(), answered, partial);
        redisWindows.get(variant.id)?.push(window);
        redisLine = `  ${describeWindow(window)}`;
      }
      // Not one answer: the stack is down or was restarted under the run; its figures would be noise.
      if (report.sent > 0 && report.unanswered === report.sent) {
        throw new Error(`${variant.id}: none of ${report.sent} calls was answered — is the stack up (npm run stack:status)?`);
      }
      if (!warmup) reps.get(variant.id)?.push(report);
      say(`  ${variant.id.padEnd(10)} ${report.throughput.toFixed(0).padStart(6)} calls/s  p50 ${report.latencyMs.p50} ms  p99 ${report.latencyMs.p99} ms${report.stageMediansMs === null ? '' : `  (to completion ${report.stageMediansMs.toCompletion} ms, back ${report.stageMediansMs.toClient} ms)`}  cpu ${report.cpu.msPerCall.toFixed(2)} ms/call${report.cpu.servicesMsPerCall === null ? '' : ` (services ${report.cpu.servicesMsPerCall.toFixed(2)})`}${report.unanswered > 0 ? `  ${report.unanswered} unanswered` : ''}${redisLine}`);
    }
  }

  const fleets = [...setups.values()].flatMap((s) => (s.fleet === undefined ? [] : [s.fleet]));
  const rss = fleets.flatMap((f) => f.peakRssMiB());
  const peakRssMiB = rss.length === 0 ? null : Math.max(...rss);
  const results = variants.map((v) => resultOf(v, reps.get(v.id) ?? [], redisWindows.get(v.id) ?? []));
  const targets = targetsOf(results, peakRssMiB);

  const table = renderTable(results, targets, settings.repetitions, unavailable, redisIdle);
  process.stdout.write(`\n${table}\n`);
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = `${RESULTS_DIR}${new Date(started).toISOString().replace(/[:.]/g, '-')}${settings.quick ? '-quick' : ''}.json`;
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
  for (const setup of setups.values()) await setup.stop().catch((error: unknown) => say(`stopping ${setup.setup}: ${String(error)}`));
  await deleteTopics(kafka, topicPrefixes).catch((error: unknown) => say(`deleting topics: ${String(error)}`));
  await deleteKeys(redis, [...setups.values()].flatMap((s) => (s.redisPrefix === undefined ? [] : [s.redisPrefix])));
  await driver.close();
  await redisCounter.close();
  await redis.quit();
}
// kafkajs and ioredis keep timers for reconnects; the bench is done.
process.exit(0);
