import type { LoadReport } from './driver.js';
import type { OtlpSink } from './otlp-sink.js';
import type { Variant } from './plan.js';
import { cpuPer1000Of } from './process-cpu.js';
import type { CpuPer1000, CpuWindow } from './process-cpu.js';
import { redisPerCallOf } from './redis-stats.js';
import type { RedisPerCall, RedisWindow } from './redis-stats.js';
import type { UnavailableClient } from './relay-clients.js';
import { anchorSection } from './anchor-report.js';
import { against, cpuAgainst, fmt, pad, padLeft, servicesOf } from './report-format.js';
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
  /** CPU ms (user + system) per 1,000 answered calls of each process (see process-cpu.ts); null when no repetition answered a call. */
  readonly cpuPer1000: CpuPer1000 | null;
  readonly errors: Readonly<Record<string, number>>;
  readonly unanswered: number;
  /** Open loop: repetitions that stopped sending early, saturated. */
  readonly saturatedReps: number;
  /** Redis commands per answered call (see redis-stats.ts); null when no repetition answered a call. */
  readonly redis: RedisPerCall | null;
  readonly repetitions: readonly LoadReport[];
  /** Each repetition's Redis counts, as measured. */
  readonly redisRepetitions: readonly RedisWindow[];
  /** Each repetition's CPU by process, in ms. */
  readonly cpuRepetitions: readonly CpuWindow[];
}

/** What the tracing arm's OTLP sink received over the whole run, and the calls (t) answered (warm-up included). */
export type TracingFigures = { readonly calls: number } & OtlpSink['received'];

export function resultOf(
  variant: Variant,
  reps: readonly LoadReport[],
  redisWindows: readonly RedisWindow[],
  cpuWindows: readonly CpuWindow[],
): VariantResult {
  const errors: Record<string, number> = {};
  for (const rep of reps) for (const [code, n] of Object.entries(rep.errors)) errors[code] = (errors[code] ?? 0) + n;
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
    cpuPer1000: cpuPer1000Of(cpuWindows),
    errors,
    unanswered: reps.reduce((n, r) => n + r.unanswered, 0),
    saturatedReps: reps.filter((r) => r.saturated).length,
    redis: redisPerCallOf(redisWindows),
    repetitions: reps,
    redisRepetitions: redisWindows,
    cpuRepetitions: cpuWindows,
  };
}

export interface Target {
  readonly name: string;
  readonly goal: string;
  readonly value: number | null;
  readonly shown: string;
  readonly met: boolean | null;
}

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
  ratio('tracing on / off, read 256 B (t/c)', 0.9, 't-256', 'c-256', '%');
  // One call on an idle system: what a single agent waits (arm s).
  const single = (name: string, id: string, goal: number) => {
    const result = by(id);
    if (result === undefined) return;
    const p50 = result.p50Ms.median;
    targets.push({ name, goal: `≤ ${goal} ms`, value: p50, shown: `${fmt(p50, 1)} ms`, met: p50 <= goal });
  };
  single('single read p50, client (s)', 's-read', 10);
  single('single allowed write p50, client (s)', 's-write', 10);
  single('single read p50, MCP (s)', 's-mcp-read', 15);
  single('single allowed write p50, MCP (s)', 's-mcp-write', 15);
  ratio('2 executor processes / 1 (10 ms I/O handler)', 1.8, 'e-2', 'e-1', '×');
  ratio('3 executor processes / 1 (10 ms I/O handler)', 2.5, 'e-3', 'e-1', '×');
  // Commands the services send per call (an EVALSHA is one; the commands its script runs are in `ran`).
  const commands = (name: string, id: string, goal: number) => {
    const redis = by(id)?.redis;
    if (redis === undefined || redis === null) return;
    const sent = redis.sent.median;
    targets.push({ name, goal: `≤ ${goal}`, value: sent, shown: `${fmt(sent, 2)} (${fmt(redis.ran.median, 1)} ran)`, met: sent <= goal });
  };
  // CPU per call of every process of the arm, the driver's included.
  const cpu = (name: string, id: string, goal: number) => {
    const total = by(id)?.cpuPer1000?.total.median;
    if (total === undefined) return;
    targets.push({ name, goal: `≤ ${goal} µs`, value: total, shown: `${fmt(total)} µs`, met: total <= goal });
  };
  cpu('CPU per read, all processes, 256 B (c)', 'c-256', 500);
  cpu('CPU per write, all processes, 256 B (d)', 'd-256', 650);
  commands('Redis commands sent per read, 256 B (c)', 'c-256', 2);
  commands('Redis commands sent per write, 256 B (d)', 'd-256', 4);
  if (peakRssMiB !== null) {
    targets.push({
      name: 'executor peak RSS (VmHWM) under arm (e)',
      goal: '≤ 200 MB',
      value: peakRssMiB,
      shown: `${fmt(peakRssMiB)} MiB`,
      met: peakRssMiB <= 200,
    });
  }
  return targets;
}

/** What the MCP front door adds: (m) and (m′) against (c) at each size both ran, in the same run. */
function mcpAgainstRead(results: readonly VariantResult[]): string[] {
  const lines: string[] = [];
  for (const m of results.filter((r) => r.arm === 'm' || r.arm === 'm2')) {
    const c = results.find((r) => r.id === `c-${m.argumentBytes}`);
    if (c === undefined) continue;
    if (lines.length === 0) {
      lines.push('');
      lines.push(
        'What the MCP front door adds — (m) 2025-11-25 and (m′) 2026-07-28 against (c), same run: HTTP + JSON-RPC framing per call on top of the same Kafka path',
      );
      lines.push(
        '  front door: the CPU of the bench process, which holds the front door (its Kafka client and its run-token lookups included)',
      );
    }
    const frontDoor = m.cpuPer1000?.bench.median;
    lines.push(
      `  ${pad(`${m.arm === 'm' ? '(m)' : '(m′)'} ${m.argumentBytes} B:`, 14)} ${against(m, c, '(c)')}` +
        `   front door ${frontDoor === undefined ? '—' : fmt(frontDoor, 0)} µs CPU/call` +
        `   CPU/1k calls: services ${cpuAgainst(servicesOf(m.cpuPer1000), servicesOf(c.cpuPer1000), '(c)')}, driver ${cpuAgainst(m.cpuPer1000?.driver, c.cpuPer1000?.driver, '(c)')}`,
    );
  }
  return lines;
}

/** What another Kafka client does with (a)'s relay: (a′) against (a) at each size both ran, in the same run. */
function clientsAgainstRelay(results: readonly VariantResult[], unavailable: readonly UnavailableClient[]): string[] {
  const lines: string[] = [];
  for (const other of results.filter((r) => r.arm === 'a2')) {
    const a = results.find((r) => r.id === `a-${other.argumentBytes}`);
    if (a === undefined) continue;
    lines.push(
      `  ${pad(`@platformatic/kafka, ${other.argumentBytes} B:`, 30)} ${against(other, a, '(a)')}` +
        `   CPU/1k calls: relay (bench process) ${cpuAgainst(other.cpuPer1000?.bench, a.cpuPer1000?.bench, '(a)')}`,
    );
  }
  if (results.some((r) => r.arm === 'a2')) for (const u of unavailable) lines.push(`  ${u.client}: ${u.reason}`);
  if (lines.length === 0) return [];
  return [
    '',
    "Other Kafka clients — (a′) against (a), same run: (a)'s two-hop relay with another client in both hops, the same kafkajs driver",
    ...lines,
  ];
}

/** What tracing costs: (t) against (c) at the size (t) ran, and what the OTLP sink received. */
function tracingAgainstRead(results: readonly VariantResult[], tracing: TracingFigures | null): string[] {
  const lines: string[] = [];
  for (const t of results.filter((r) => r.arm === 't')) {
    const c = results.find((r) => r.id === `c-${t.argumentBytes}`);
    if (c === undefined) continue;
    const by = (name: string, f: (x: CpuPer1000) => Spread | null) =>
      `${name} ${cpuAgainst(t.cpuPer1000 === null ? null : f(t.cpuPer1000), c.cpuPer1000 === null ? null : f(c.cpuPer1000), '(c)')}`;
    lines.push(`  ${pad(`${t.argumentBytes} B:`, 8)} ${against(t, c, '(c)')} (goal ≥ 90%)`);
    lines.push(
      `  ${' '.repeat(8)} CPU/1k calls: ${by('policy', (x) => x.policy)}, ${by('executor', (x) => x.executorsSum)}, ${by('driver', (x) => x.driver)}`,
    );
  }
  if (lines.length === 0) return [];
  if (tracing !== null) {
    const per = (n: number, digits: number) => (tracing.calls === 0 ? '–' : fmt(n / tracing.calls, digits));
    lines.push(
      `  OTLP received over the run: ${tracing.requests} requests, ${per(tracing.spans, 2)} spans and ${per(tracing.bytes, 0)} bytes per call of (t) (${tracing.calls} calls, warm-up included)` +
        (tracing.unreadable > 0 ? `, ${tracing.unreadable} bodies not readable as OTLP` : '') +
        (tracing.requests === 0 ? ' — no process exported a span: tracing is not on in the services yet' : ''),
    );
  }
  return [
    '',
    "What tracing costs — (t) against (c), same run: (c)'s processes with OTEL_EXPORTER_OTLP_ENDPOINT set to the bench's loopback OTLP/HTTP sink",
    ...lines,
  ];
}

/** CPU ms per 1,000 answered calls of each process, for every variant measured. */
function cpuTable(results: readonly VariantResult[], repetitions: number): string[] {
  const measured = results.filter((r) => r.cpuPer1000 !== null);
  if (measured.length === 0) return [];
  const cell = (s: Spread | null | undefined, width = 8) => padLeft(s === null || s === undefined ? '–' : fmt(s.median), width);
  const lines = [
    '',
    `CPU ms per 1,000 calls, by process — user + system, measured inside each process; medians of ${repetitions} repetitions`,
  ];
  lines.push(
    [
      pad('arm', 40),
      padLeft('driver', 8),
      padLeft('bench', 8),
      padLeft('policy', 8),
      padLeft('executor', 9),
      padLeft('anchor', 8),
      padLeft('total', 8),
      '  each executor',
    ].join(' '),
  );
  for (const r of measured) {
    const cpu = r.cpuPer1000 as CpuPer1000;
    lines.push(
      [
        pad(r.label, 40),
        cell(cpu.driver),
        cell(cpu.bench),
        cell(cpu.policy),
        cell(cpu.executorsSum, 9),
        cell(cpu.anchor),
        cell(cpu.total),
        cpu.executors.length > 1 ? `  ${cpu.executors.map((e) => fmt(e.median)).join(' + ')}` : '',
      ].join(' '),
    );
  }
  lines.push(
    "  driver: the load generator's process, first send to end of drain. bench: the bench's main process — the relay in (a), (a′), (b),",
  );
  lines.push("  the MCP front door in (m), the OTLP sink in (t); other arms' relays are paused. policy, executor: the Gatehouse services,");
  lines.push(
    '  a process each (executor: their sum in (e)), sampled over IPC as the load starts and as it ends. anchor: its processes,',
    "  from /proc. Every other setup's processes are stopped (SIGSTOP) while an arm runs.",
  );
  return lines;
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
  const lines = [
    '',
    `Redis per call — medians of ${repetitions} repetitions; every command counted, pipelined or not (commands, not round trips)`,
  ];
  lines.push(
    [pad('arm', 40), padLeft('sent', 8), padLeft('ran', 8), padLeft('batches', 8), padLeft('reads', 8), ' commands sent'].join(' '),
  );
  for (const r of measured) {
    const redis = r.redis as RedisPerCall;
    const shown = byCommand(redis.sentByCommand);
    lines.push(
      [
        pad(r.label, 40),
        cell(redis.sent),
        cell(redis.ran),
        cell(redis.batches),
        cell(redis.reads),
        ` ${shown}${redis.quiet ? '' : ' (Redis was not always quiet at a window’s end)'}`,
      ].join(' '),
    );
    if (Object.keys(redis.insideScripts).length > 0) lines.push(`${' '.repeat(78)}in scripts: ${byCommand(redis.insideScripts)}`);
  }
  lines.push('  sent: commands the services sent per answered call, each process counting its own connection (an EVALSHA is one;');
  lines.push(
    "  MULTI … EXEC counts each of its commands). ran: commands Redis executed per call (INFO commandstats, the bench's INFO calls",
  );
  lines.push('  removed): what was sent plus what Lua scripts ran inside it (`in scripts`).');
  lines.push(
    "  batches: writes of the services' connections per call (a lone command or one pipeline); reads: Redis' socket reads per call",
  );
  lines.push(
    "  (total_reads_processed). Under load one batch carries many calls' commands, so both are below the round trips a call waits for.",
  );
  if (idle !== undefined) {
    const ran = Object.values(idle.ran).reduce((n, c) => n + c, 0);
    lines.push(
      `  With no call in flight Redis ran ${ran} command${ran === 1 ? '' : 's'} in ${(idle.ms / 1000).toFixed(1)} s${ran === 0 ? '' : ` (${byCommand(idle.ran)}); every window holds such traffic too`}.`,
    );
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
  tracing: TracingFigures | null = null,
): string {
  const lines: string[] = [];
  const closed = results.filter((r) => r.rate === null);
  const relayOf = (r: VariantResult) => results.find((x) => x.id === `a-${r.argumentBytes}`);
  if (closed.length > 0) {
    lines.push(`Closed loop (calls in flight kept constant) — medians of ${repetitions} repetitions, spread = (max − min) / median`);
    lines.push(
      [
        pad('arm', 40),
        padLeft('calls/s', 9),
        padLeft('spread', 8),
        padLeft('vs (a)', 8),
        padLeft('p50 ms', 8),
        padLeft('p99 ms', 8),
        padLeft('CPU/1k', 8),
        padLeft('errors', 8),
      ].join(' '),
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
          padLeft(r.cpuPer1000 === null ? '–' : fmt(r.cpuPer1000.total.median), 8),
          padLeft(String(errors), 8),
        ].join(' '),
      );
    }
    lines.push("  CPU/1k: CPU ms (user + system) per 1,000 answered calls of all the arm's processes together; by process below.");
    lines.push(...tracingAgainstRead(results, tracing));
    lines.push(...mcpAgainstRead(results));
    lines.push(...clientsAgainstRelay(results, unavailable));
    lines.push(...anchorSection(results));
  }
  const open = results.filter((r) => r.rate !== null);
  if (open.length > 0) {
    lines.push('');
    lines.push('Open loop (fixed send schedule; latency from sent_at to the answer at the client) — medians of repetitions');
    lines.push(
      [
        pad('arm', 40),
        padLeft('done/s', 9),
        padLeft('p50 ms', 8),
        padLeft('p99 ms', 8),
        padLeft('p99.9 ms', 9),
        padLeft('max p99', 8),
        padLeft('lost', 6),
        padLeft('saturated', 10),
      ].join(' '),
    );
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
  lines.push(...cpuTable(results, repetitions));
  lines.push(...redisTable(results, repetitions, redisIdle));
  if (targets.length > 0) {
    lines.push('');
    lines.push('Targets');
    for (const t of targets)
      lines.push(`  ${t.met === true ? 'met   ' : 'MISSED'}  ${pad(t.name, 48)} ${padLeft(t.shown, 10)}  (goal ${t.goal})`);
  }
  return lines.join('\n');
}
