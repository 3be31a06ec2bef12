import type { LoadFigures } from './load-audit.js';
import type { LoadCall } from './mixed-load.js';
import type { LagSample, MemorySample, RedisSample } from './soak-monitor.js';

/** A fault the soak made: what it was, when (minutes into the load) and what it reported. */
export interface SoakFault {
  readonly kind: string;
  readonly atMinute: number;
  readonly tookMs: number;
  readonly facts: Record<string, unknown>;
}

export interface SoakRecord {
  readonly minutes: number;
  readonly ratePerSecond: number;
  readonly startedAt: number;
  readonly calls: readonly LoadCall[];
  readonly faults: readonly SoakFault[];
  readonly memory: readonly MemorySample[];
  readonly lags: readonly LagSample[];
  readonly redis: readonly RedisSample[];
  readonly figures: LoadFigures;
  /** Why the system of record refused call assertions: refusal code, with how many of each. */
  readonly refusalCodes: Readonly<Record<string, number>>;
  /** When the system of record refused each request that came past its assertion's lifetime. */
  readonly lateRefusals: readonly number[];
  /** Why each write went to a person: reason and last error, with how many of each. */
  readonly handoffReasons: Readonly<Record<string, number>>;
}

const quantile = (sorted: readonly number[], q: number): number | undefined =>
  sorted.length === 0 ? undefined : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
const show = (n: number | undefined, digits = 0): string => (n === undefined ? '–' : n.toFixed(digits));
const minuteOf = (at: number, startedAt: number): number => Math.max(0, Math.floor((at - startedAt) / 60_000));

/** Per minute of the load: calls sent and settled, the client's p50 and p99, the answers that were not ok. */
function minuteRows(record: SoakRecord): string[] {
  const minutes = new Map<number, { sent: number; latencies: number[]; notOk: number }>();
  const row = (m: number) => {
    let r = minutes.get(m);
    if (r === undefined) minutes.set(m, (r = { sent: 0, latencies: [], notOk: 0 }));
    return r;
  };
  for (const call of record.calls) {
    row(minuteOf(call.startedAt, record.startedAt)).sent += 1;
    if (call.settledAt === undefined) continue;
    const r = row(minuteOf(call.settledAt, record.startedAt));
    r.latencies.push(call.settledAt - call.startedAt);
    if (call.answer?.ok !== true) r.notOk += 1;
  }
  const faultsIn = (m: number) =>
    record.faults
      .filter((f) => Math.floor(f.atMinute) === m)
      .map((f) => f.kind)
      .join(', ');
  const lagIn = (m: number, group: string) =>
    Math.max(0, ...record.lags.filter((l) => l.group === group && minuteOf(l.at, record.startedAt) === m).map((l) => l.lag ?? 0));
  const groups = [...new Set(record.lags.map((l) => l.group))];
  const lateIn = (m: number) => record.lateRefusals.filter((at) => minuteOf(at, record.startedAt) === m).length;
  // The process whose event loop stalled longest in the minute, and for how long.
  const loopIn = (m: number) => {
    const worst = record.memory
      .filter((s) => s.loopMaxMs !== undefined && minuteOf(s.at, record.startedAt) === m)
      .reduce<MemorySample | undefined>((a, s) => ((s.loopMaxMs ?? 0) > (a?.loopMaxMs ?? -1) ? s : a), undefined);
    return worst === undefined ? '–' : `${show(worst.loopMaxMs)} (${worst.name})`;
  };
  const lines = [
    `| minute | sent | settled | p50 ms | p99 ms | not ok | late refusals | longest event loop stall ms | ${groups.map((g) => `max lag ${g}`).join(' | ')} | fault |`,
    `|---|---|---|---|---|---|---|---|${groups.map(() => '---|').join('')}---|`,
  ];
  for (const m of [...minutes.keys()].sort((a, b) => a - b)) {
    const r = minutes.get(m) as { sent: number; latencies: number[]; notOk: number };
    const sorted = r.latencies.sort((a, b) => a - b);
    lines.push(
      `| ${m} | ${r.sent} | ${sorted.length} | ${show(quantile(sorted, 0.5))} | ${show(quantile(sorted, 0.99))} | ${r.notOk} | ${lateIn(m)} | ${loopIn(m)} | ${groups
        .map((g) => String(lagIn(m, g)))
        .join(' | ')} | ${faultsIn(m)} |`,
    );
  }
  return lines;
}

/** Per process: RSS and heap used (MiB) at the first look, every fifth minute, the last look, and the most seen. */
function memoryRows(record: SoakRecord): string[] {
  const names = [...new Set(record.memory.map((s) => s.name))];
  const marks = Array.from({ length: Math.floor(record.minutes / 5) + 1 }, (_, i) => i * 5);
  const lines = [
    `| process | ${marks.map((m) => `min ${m}`).join(' | ')} | last | most |`,
    `|---|${marks.map(() => '---|').join('')}---|---|`,
  ];
  for (const name of names) {
    const samples = record.memory.filter((s) => s.name === name && s.rssMiB !== undefined);
    // The look nearest after each mark, unless the process was not there yet (started after a kill).
    const at = (m: number) => samples.find((s) => minuteOf(s.at, record.startedAt) === m);
    const cell = (s: MemorySample | undefined) => (s === undefined ? '–' : `${show(s.rssMiB)} / ${show(s.heapUsedMiB)}`);
    const most = samples.reduce<MemorySample | undefined>((a, s) => ((s.rssMiB ?? 0) > (a?.rssMiB ?? -1) ? s : a), undefined);
    lines.push(`| ${name} | ${marks.map((m) => cell(at(m))).join(' | ')} | ${cell(samples.at(-1))} | ${cell(most)} |`);
  }
  return lines;
}

/** The soak's report, in Markdown: the audit, the faults, p99 and lag per minute, memory over time. */
export function soakReport(record: SoakRecord): string {
  const f = record.figures;
  const redis = record.redis.filter((r) => r.usedMiB !== undefined);
  const seconds = (record.calls.reduce((latest, c) => Math.max(latest, c.settledAt ?? 0), 0) - record.startedAt) / 1000;
  return [
    `# Soak: ${record.minutes} min at ${record.ratePerSecond} calls/s`,
    '',
    `Started ${new Date(record.startedAt).toISOString()}; ${f.commands} calls in ${seconds.toFixed(0)} s (${(f.commands / seconds).toFixed(1)} calls/s).`,
    '',
    '## Audit',
    '',
    `- answered once on the topic: ${f.answered}; handed to a person: ${f.handoffs}; lost: ${f.lost}; two different answers: ${f.conflicting}`,
    `- writes: ${f.commits} commits, ${f.applied} applied (${f.appliedKeys} keys in PostgreSQL), applied twice: ${f.appliedTwice}, contradictions: ${f.contradictions}`,
    `- not accepted: ${f.notAccepted}; client timeouts: ${f.clientTimeouts} (answered on the topic later: ${f.clientTimeoutsAnsweredOnTopic}); answers differing from the topic: ${f.answerMismatches}`,
    `- refused call assertions: ${f.refusedCalls}, and ${f.lateCalls} that came past their lifetime ${JSON.stringify(record.refusalCodes)}; writes sent again under their key: ${f.resentWrites}; slots still held: ${f.slotsInUse}`,
    `- codes: ${JSON.stringify(f.codes)}`,
    `- handed to a person because: ${JSON.stringify(record.handoffReasons)}`,
    '',
    '## Faults',
    '',
    '| minute | fault | took s | facts |',
    '|---|---|---|---|',
    ...record.faults.map((x) => `| ${x.atMinute.toFixed(1)} | ${x.kind} | ${(x.tookMs / 1000).toFixed(1)} | ${JSON.stringify(x.facts)} |`),
    '',
    '## Per minute (latency by the minute a call settled; lag: records not yet committed by the group)',
    '',
    ...minuteRows(record),
    '',
    '## Memory per process: RSS / heap used, MiB',
    '',
    ...memoryRows(record),
    '',
    `Redis (masters, summed): ${show(redis[0]?.usedMiB, 1)} MiB at the start, ${show(redis.at(-1)?.usedMiB, 1)} MiB at the end, ${show(
      Math.max(...redis.map((r) => r.usedMiB ?? 0)),
      1,
    )} MiB at most.`,
    '',
  ].join('\n');
}

/** The system of record's refusals by code, from its metrics (`gatehouse_call_refusals_total`). */
export function refusalCodesIn(exposition: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const match of exposition.matchAll(/^gatehouse_call_refusals_total\{code="([^"]+)"\} (\d+)/gm)) {
    counts[match[1] as string] = Number(match[2]);
  }
  return counts;
}
