import type { LoadReport } from './driver.js';
import type { Variant } from './plan.js';
import { redisPerCallOf } from './redis-stats.js';
import type { RedisPerCall, RedisWindow } from './redis-stats.js';
import type { UnavailableClient } from './relay-clients.js';
import { spreadOf } from './stats.js';
import type { Spread } from './stats.js';

/** A variant's measured repetitions and their medians. */
export interface VariantResult {
  readonly id: string;
  readonly arm: Variant['arm'];
  readonly label: string;
  readonly argumentBytes: number;
  readonly executors: number | null;
  readonly rate: number | null;
  readonly throughput: Spread;
  readonly p50Ms: Spread;
  readonly p99Ms: Spread;
  readonly p999Ms: Spread;
  /** Process CPU (user + system) per answered call; see ProcessCpu. */
  readonly cpuMsPerCall: Spread;
  /** The same without the driver thread's CPU: the services' (and the front door's) share; null off Linux. */
  readonly servicesCpuMsPerCall: Spread | null;
  readonly errors: Readonly<Record<string, number>>;
  readonly unanswered: number;
  /** Open loop: repetitions that stopped sending early, saturated. */
  readonly saturatedReps: number;
  /** Redis commands per answered call (see redis-stats.ts); null when no repetition answered a call. */
  readonly redis: RedisPerCall | null;
  readonly repetitions: readonly LoadReport[];
  /** Each repetition's Redis counts, as measured. */
  readonly redisRepetitions: readonly RedisWindow[];
}

export function resultOf(variant: Variant, reps: readonly LoadReport[], redisWindows: readonly RedisWindow[]): VariantResult {
  const errors: Record<string, number> = {};
  for (const rep of reps) for (const [code, n] of Object.entries(rep.errors)) errors[code] = (errors[code] ?? 0) + n;
  const servicesCpu = reps.flatMap((r) => (r.cpu.servicesMsPerCall === null ? [] : [r.cpu.servicesMsPerCall]));
  return {
    id: variant.id,
    arm: variant.arm,
    label: variant.label,
    argumentBytes: variant.argumentBytes,
    executors: variant.executors ?? null,
    rate: variant.rate ?? null,
    throughput: spreadOf(reps.map((r) => r.throughput)),
    p50Ms: spreadOf(reps.map((r) => r.latencyMs.p50)),
    p99Ms: spreadOf(reps.map((r) => r.latencyMs.p99)),
    p999Ms: spreadOf(reps.map((r) => r.latencyMs.p999)),
    cpuMsPerCall: spreadOf(reps.map((r) => r.cpu.msPerCall)),
    servicesCpuMsPerCall: servicesCpu.length === reps.length && reps.length > 0 ? spreadOf(servicesCpu) : null,
    errors,
    unanswered: reps.reduce((n, r) => n + r.unanswered, 0),
    saturatedReps: reps.filter((r) => r.saturated).length,
    redis: redisPerCallOf(redisWindows),
    repetitions: reps,
    redisRepetitions: redisWindows,
  };
}

export interface Target {
  readonly name: string;
  readonly goal: string;
  readonly value: number | null;
  readonly shown: string;
  readonly met: boolean | null;
}

const fmt = (n: number, digits = 0): string => (Number.isFinite(n) ? n.toFixed(digits) : n > 0 ? 'never' : '–');

export function targetsOf(results: readonly VariantResult[], peakRssMiB: number | null): Target[] {
  const by = (id: string) => results.find((r) => r.id === id);
  const targets: Target[] = [];
  const ratio = (name: string, goal: number, top: string, bottom: string, unit: '%' | '×') => {
    const a = by(top);
    const b = by(bottom);
    if (a === undefined || b === undefined) return;
    const value = a.throughput.median / b.throughput.median;
    targets.push({
      name,
      goal: unit === '%' ? `≥ ${goal * 100}%` : `≥ ${goal}×`,
      value,
      shown: unit === '%' ? `${fmt(value * 100, 1)}%` : `${fmt(value, 2)}×`,
      met: value >= goal,
    });
  };
  for (const size of [...new Set(results.map((r) => r.argumentBytes))].sort((x, y) => x - y)) {
    ratio(`read path / raw relay, ${size} B (c/a)`, 0.5, `c-${size}`, `a-${size}`, '%');
    ratio(`write path / raw relay, ${size} B (d/a)`, 0.3, `d-${size}`, `a-${size}`, '%');
  }
  const open = by('open-1000');
  if (open !== undefined) {
    const p99 = open.p99Ms.median;
    targets.push({ name: 'read p99 at 1,000 calls/s (open loop)', goal: '≤ 50 ms', value: p99, shown: `${fmt(p99)} ms`, met: p99 <= 50 });
  }
  ratio('2 executor processes / 1 (10 ms I/O handler)', 1.7, 'e-2', 'e-1', '×');
  ratio('3 executor processes / 1 (10 ms I/O handler)', 2.3, 'e-3', 'e-1', '×');
  if (peakRssMiB !== null) {
    targets.push({ name: 'executor peak RSS (VmHWM) under arm (e)', goal: '≤ 200 MB', value: peakRssMiB, shown: `${fmt(peakRssMiB)} MiB`, met: peakRssMiB <= 200 });
  }
  return targets;
}

const pad = (text: string, width: number) => (text.length >= width ? text : text + ' '.repeat(width - text.length));
const padLeft = (text: string, width: number) => (text.length >= width ? text : ' '.repeat(width - text.length) + text);

/** What the MCP front door adds: (m) against (c) at each size both ran, in the same run. */
function mcpAgainstRead(results: readonly VariantResult[]): string[] {
  const lines: string[] = [];
  for (const m of results.filter((r) => r.arm === 'm')) {
    const c = results.find((r) => r.id === `c-${m.argumentBytes}`);
    if (c === undefined) continue;
    const signed = (n: number, digits = 0) => `${n >= 0 ? '+' : '−'}${fmt(Math.abs(n), digits)}`;
    const cpu = (mm: Spread, cc: Spread) => `${fmt(mm.median / cc.median, 2)}× (c) (${signed(mm.median - cc.median, 2)} ms)`;
    if (lines.length === 0) {
      lines.push('');
      lines.push('What the MCP front door adds — (m) against (c), same run: HTTP + JSON-RPC + SSE framing per call on top of the same Kafka path');
    }
    lines.push(
      `  ${pad(`${m.argumentBytes} B:`, 8)} calls/s ${fmt((m.throughput.median / c.throughput.median) * 100, 0)}% of (c)` +
        `   p50 ${signed(m.p50Ms.median - c.p50Ms.median)} ms   p99 ${signed(m.p99Ms.median - c.p99Ms.median)} ms` +
        `   CPU per call ${cpu(m.cpuMsPerCall, c.cpuMsPerCall)}` +
        (m.servicesCpuMsPerCall === null || c.servicesCpuMsPerCall === null ? '' : `, services' share ${cpu(m.servicesCpuMsPerCall, c.servicesCpuMsPerCall)}`),
    );
  }
  return lines;
}

/** What another Kafka client does with (a)'s relay: (a′) against (a) at each size both ran, in the same run. */
function clientsAgainstRelay(results: readonly VariantResult[], unavailable: readonly UnavailableClient[]): string[] {
  const lines: string[] = [];
  const signed = (n: number, digits = 0) => `${n >= 0 ? '+' : '−'}${fmt(Math.abs(n), digits)}`;
  const cpu = (other: Spread, kafkajs: Spread) => `${fmt(other.median / kafkajs.median, 2)}× (a) (${signed(other.median - kafkajs.median, 2)} ms)`;
  for (const other of results.filter((r) => r.arm === 'a2')) {
    const a = results.find((r) => r.id === `a-${other.argumentBytes}`);
    if (a === undefined) continue;
    lines.push(
      `  ${pad(`@platformatic/kafka, ${other.argumentBytes} B:`, 30)} calls/s ${fmt((other.throughput.median / a.throughput.median) * 100, 0)}% of (a)` +
        `   p50 ${signed(other.p50Ms.median - a.p50Ms.median)} ms   p99 ${signed(other.p99Ms.median - a.p99Ms.median)} ms` +
        `   CPU per call ${cpu(other.cpuMsPerCall, a.cpuMsPerCall)}` +
        (other.servicesCpuMsPerCall === null || a.servicesCpuMsPerCall === null ? '' : `, relay's share ${cpu(other.servicesCpuMsPerCall, a.servicesCpuMsPerCall)}`),
    );
  }
  if (results.some((r) => r.arm === 'a2')) for (const u of unavailable) lines.push(`  ${u.client}: ${u.reason}`);
  if (lines.length === 0) return [];
  return ['', "Other Kafka clients — (a′) against (a), same run: (a)'s two-hop relay with another client in both hops, the same kafkajs driver", ...lines];
}

/** `evalsha 5, get 2, set 1.01`: most first; whole numbers without decimals. */
function byCommand(counts: Readonly<Record<string, number>>): string {
  const entries = Object.entries(counts).sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  if (entries.length === 0) return '—';
  return entries.map(([name, n]) => `${name} ${Math.abs(n - Math.round(n)) < 0.005 ? String(Math.round(n)) : n.toFixed(2)}`).join(', ');
}

/** Redis commands per call of every variant measured, with what each sent and what its scripts ran. */
function redisTable(results: readonly VariantResult[], repetitions: number, idle: RedisWindow | undefined): string[] {
  const measured = results.filter((r) => r.redis !== null);
  if (measured.length === 0) return [];
  const cell = (s: Spread | null) => padLeft(s === null ? '–' : s.median === 0 ? '0' : fmt(s.median, 2), 8);
  const lines = ['', `Redis per call — medians of ${repetitions} repetitions; every command counted, pipelined or not (commands, not round trips)`];
  lines.push([pad('arm', 40), padLeft('sent', 8), padLeft('ran', 8), padLeft('batches', 8), padLeft('reads', 8), ' commands sent'].join(' '));
  for (const r of measured) {
    const redis = r.redis as RedisPerCall;
    const shown = redis.sentByCommand === null ? `ran: ${byCommand(redis.ranByCommand)}` : byCommand(redis.sentByCommand);
    lines.push([pad(r.label, 40), cell(redis.sent), cell(redis.ran), cell(redis.batches), cell(redis.reads), ` ${shown}${redis.quiet ? '' : ' (Redis was not always quiet at a window’s end)'}`].join(' '));
    if (redis.insideScripts !== null && Object.keys(redis.insideScripts).length > 0) lines.push(`${' '.repeat(78)}in scripts: ${byCommand(redis.insideScripts)}`);
  }
  lines.push("  sent: commands the in-process services sent per answered call (an EVALSHA is one; MULTI … EXEC counts each of its commands).");
  lines.push('  ran: commands Redis executed per call (INFO commandstats, the bench\'s INFO calls removed): what was sent plus what Lua');
  lines.push('  scripts ran inside it (`in scripts`). – where services ran as other processes (arm e): only Redis\' own count is whole there.');
  lines.push("  batches: writes of the services' connection per call (a lone command or one pipeline); reads: Redis' socket reads per call");
  lines.push('  (total_reads_processed). Under load one batch carries many calls\' commands, so both are below the round trips a call waits for.');
  if (idle !== undefined) {
    const ran = Object.values(idle.ran).reduce((n, c) => n + c, 0);
    lines.push(`  With no call in flight Redis ran ${ran} command${ran === 1 ? '' : 's'} in ${(idle.ms / 1000).toFixed(1)} s${ran === 0 ? '' : ` (${byCommand(idle.ran)}); every window holds such traffic too`}.`);
  }
  return lines;
}

/** The table `npm run bench` prints. */
export function renderTable(
  results: readonly VariantResult[],
  targets: readonly Target[],
  repetitions: number,
  unavailable: readonly UnavailableClient[] = [],
  redisIdle?: RedisWindow,
): string {
  const lines: string[] = [];
  const closed = results.filter((r) => r.rate === null);
  const relayOf = (r: VariantResult) => results.find((x) => x.id === `a-${r.argumentBytes}`);
  if (closed.length > 0) {
    lines.push(`Closed loop (calls in flight kept constant) — medians of ${repetitions} repetitions, spread = (max − min) / median`);
    lines.push(
      [pad('arm', 40), padLeft('calls/s', 9), padLeft('spread', 8), padLeft('vs (a)', 8), padLeft('p50 ms', 8), padLeft('p99 ms', 8), padLeft('CPU ms', 8), padLeft('svc CPU', 8), padLeft('errors', 8)].join(' '),
    );
    for (const r of closed) {
      const relay = relayOf(r);
      const vsRelay = r.arm === 'e' || relay === undefined ? '' : `${fmt((r.throughput.median / relay.throughput.median) * 100, 0)}%`;
      const errors = Object.values(r.errors).reduce((n, e) => n + e, 0) + r.unanswered;
      lines.push(
        [
          pad(r.label, 40),
          padLeft(fmt(r.throughput.median), 9),
          padLeft(`${fmt(r.throughput.spreadPct, 0)}%`, 8),
          padLeft(vsRelay, 8),
          padLeft(fmt(r.p50Ms.median), 8),
          padLeft(fmt(r.p99Ms.median), 8),
          // Arm (e)'s executors are other processes: this process's CPU is not theirs.
          padLeft(r.arm === 'e' ? '' : fmt(r.cpuMsPerCall.median, 2), 8),
          padLeft(r.arm === 'e' || r.servicesCpuMsPerCall === null ? '' : fmt(r.servicesCpuMsPerCall.median, 2), 8),
          padLeft(String(errors), 8),
        ].join(' '),
      );
    }
    lines.push('  CPU ms: CPU (user + system) of the bench process per answered call, first send to end of drain. The driver thread, the');
    lines.push('  services of every arm and, in (m), the MCP front door and its clients all run in that one process: compare arms by ratio.');
    lines.push('  svc CPU: the same less the driver thread\'s own CPU (Linux schedstat): the services\' share, in (m) with the front door.');
    lines.push(...mcpAgainstRead(results));
    lines.push(...clientsAgainstRelay(results, unavailable));
  }
  const open = results.filter((r) => r.rate !== null);
  if (open.length > 0) {
    lines.push('');
    lines.push('Open loop (fixed send schedule; latency from sent_at to the answer at the client) — medians of repetitions');
    lines.push([pad('arm', 40), padLeft('done/s', 9), padLeft('p50 ms', 8), padLeft('p99 ms', 8), padLeft('p99.9 ms', 9), padLeft('max p99', 8), padLeft('lost', 6), padLeft('saturated', 10)].join(' '));
    for (const r of open) {
      lines.push(
        [
          pad(r.label, 40),
          padLeft(fmt(r.throughput.median), 9),
          padLeft(fmt(r.p50Ms.median), 8),
          padLeft(fmt(r.p99Ms.median), 8),
          padLeft(fmt(r.p999Ms.median), 9),
          padLeft(fmt(r.p99Ms.max), 8),
          padLeft(String(r.unanswered + Object.values(r.errors).reduce((n, e) => n + e, 0)), 6),
          padLeft(`${r.saturatedReps}/${r.repetitions.length}`, 10),
        ].join(' '),
      );
    }
  }
  lines.push(...redisTable(results, repetitions, redisIdle));
  if (targets.length > 0) {
    lines.push('');
    lines.push('Targets');
    for (const t of targets) lines.push(`  ${t.met === true ? 'met   ' : 'MISSED'}  ${pad(t.name, 48)} ${padLeft(t.shown, 10)}  (goal ${t.goal})`);
  }
  return lines.join('\n');
}
