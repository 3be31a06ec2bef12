import type { CpuPer1000 } from './process-cpu.js';
import type { VariantResult } from './report.js';
import { spreadOf } from './stats.js';
import type { Spread } from './stats.js';

// How the bench's tables write their figures.

export const fmt = (n: number, digits = 0): string => (Number.isFinite(n) ? n.toFixed(digits) : n > 0 ? 'never' : '–');
export const pad = (text: string, width: number) => (text.length >= width ? text : text + ' '.repeat(width - text.length));
export const padLeft = (text: string, width: number) => (text.length >= width ? text : ' '.repeat(width - text.length) + text);

const signed = (n: number, digits = 0) => `${n >= 0 ? '+' : '−'}${fmt(Math.abs(n), digits)}`;

/** A CPU figure per 1,000 calls against another: `1.20× (c) (+310 ms)`. */
export function cpuAgainst(mine: Spread | null | undefined, theirs: Spread | null | undefined, name: string): string {
  if (mine === null || mine === undefined || theirs === null || theirs === undefined) return '–';
  return `${fmt(mine.median / theirs.median, 2)}× ${name} (${signed(mine.median - theirs.median)} ms)`;
}

/** The services' CPU per 1,000 calls: every process but the driver (the bench process holds the relay or the front door). */
export function servicesOf(cpu: CpuPer1000 | null): Spread | null {
  if (cpu === null) return null;
  const values = cpu.total.values.map((t, i) => t - (cpu.driver.values[i] ?? 0));
  return spreadOf(values);
}

/** `calls/s 93% of (c)   p50 +2 ms   p99 +5 ms`. */
export function against(mine: VariantResult, theirs: VariantResult, name: string): string {
  return (
    `calls/s ${fmt((mine.throughput.median / theirs.throughput.median) * 100, 0)}% of ${name}` +
    `   p50 ${signed(mine.p50Ms.median - theirs.p50Ms.median)} ms   p99 ${signed(mine.p99Ms.median - theirs.p99Ms.median)} ms`
  );
}
