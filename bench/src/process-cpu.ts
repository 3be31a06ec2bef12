import type { ProcessSample } from './child-process.js';
import type { SentElsewhere } from './redis-stats.js';
import type { ServiceProcess } from './setups.js';
import { spreadOf } from './stats.js';
import type { Spread } from './stats.js';

/**
 * CPU per process over one measured window: user + system from `process.cpuUsage()`, measured inside
 * each process. The driver measures its own from its first send to the end of its drain; the bench
 * process and the service processes are sampled over IPC just before the load starts and just after
 * it ends.
 */
export interface CpuWindow {
  /** Calls answered in the window (ok or not): what every figure is divided by. */
  readonly calls: number;
  readonly driverMs: number;
  /** The bench main process: the relays (a, a′, b), the MCP front door (m), the OTLP sink (t), the bench's own sampling. */
  readonly benchMs: number;
  /** The policy service's process; null where there is none (the relays). */
  readonly policyMs: number | null;
  /** Each executor process. */
  readonly executorMs: readonly number[];
  /** An anchor's processes together; null for Gatehouse and the relays. */
  readonly anchorMs: number | null;
}

/** A variant's CPU per 1,000 answered calls by process: medians over its repetitions. */
export interface CpuPer1000 {
  readonly driver: Spread;
  readonly bench: Spread;
  readonly policy: Spread | null;
  /** Each executor process, in start order. */
  readonly executors: readonly Spread[];
  /** The executors together (the median of each window's sum). */
  readonly executorsSum: Spread | null;
  /** An anchor's processes together; null for Gatehouse and the relays. */
  readonly anchor: Spread | null;
  /** Every process of the arm together. */
  readonly total: Spread;
}

/** The bench process and every service process of a setup at one instant. */
export interface SetupSample {
  readonly bench: NodeJS.CpuUsage;
  readonly services: readonly ProcessSample[];
}

export async function sampleSetup(services: readonly ServiceProcess[]): Promise<SetupSample> {
  const samples = await Promise.all(services.map((s) => s.child.sample()));
  return { bench: process.cpuUsage(), services: samples };
}

const cpuMs = (after: NodeJS.CpuUsage, before: NodeJS.CpuUsage) => (after.user - before.user + after.system - before.system) / 1000;

/** The CPU window between two samples of a setup, with the driver's own figure. */
export function cpuWindow(
  services: readonly ServiceProcess[],
  before: SetupSample,
  after: SetupSample,
  driverMs: number,
  calls: number,
): CpuWindow {
  const ms = (i: number) => {
    const a = after.services[i];
    const b = before.services[i];
    return a === undefined || b === undefined ? 0 : cpuMs(a.cpu, b.cpu);
  };
  const policy = services.findIndex((s) => s.role === 'policy');
  return {
    calls,
    driverMs,
    benchMs: cpuMs(after.bench, before.bench),
    policyMs: policy === -1 ? null : ms(policy),
    executorMs: services.flatMap((s, i) => (s.role === 'executor' ? [ms(i)] : [])),
    anchorMs: services.some((s) => s.role === 'anchor') ? services.reduce((n, s, i) => (s.role === 'anchor' ? n + ms(i) : n), 0) : null,
  };
}

/** What the service processes sent to Redis between two samples, summed. */
export function sentBetween(before: SetupSample, after: SetupSample): SentElsewhere {
  const sent: Record<string, number> = {};
  let batches = 0;
  after.services.forEach((a, i) => {
    const b = before.services[i];
    batches += a.redisBatches - (b?.redisBatches ?? 0);
    for (const [name, n] of Object.entries(a.redisSent)) {
      const d = n - (b?.redisSent[name] ?? 0);
      if (d !== 0) sent[name] = (sent[name] ?? 0) + d;
    }
  });
  return { sent, batches };
}

/** Medians per 1,000 answered calls; null without a window that answered a call. */
export function cpuPer1000Of(windows: readonly CpuWindow[]): CpuPer1000 | null {
  const counted = windows.filter((w) => w.calls > 0);
  if (counted.length === 0) return null;
  const per = (f: (w: CpuWindow) => number) => spreadOf(counted.map((w) => (f(w) * 1000) / w.calls));
  const executors = Math.max(...counted.map((w) => w.executorMs.length));
  const sum = (w: CpuWindow) => w.executorMs.reduce((n, e) => n + e, 0);
  return {
    driver: per((w) => w.driverMs),
    bench: per((w) => w.benchMs),
    policy: counted.every((w) => w.policyMs !== null) ? per((w) => w.policyMs ?? 0) : null,
    executors: Array.from({ length: executors }, (_, i) => per((w) => w.executorMs[i] ?? 0)),
    executorsSum: executors === 0 ? null : per(sum),
    anchor: counted.every((w) => w.anchorMs !== null) ? per((w) => w.anchorMs ?? 0) : null,
    total: per((w) => w.driverMs + w.benchMs + (w.policyMs ?? 0) + sum(w) + (w.anchorMs ?? 0)),
  };
}
