/** Nearest-rank percentile of ascending `sorted` (q in 0..1); Infinity stands for a call never answered. */
function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

export function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

export interface LatencySummary {
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
}

export function summarize(latencies: readonly number[]): LatencySummary {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    p999: percentile(sorted, 0.999),
    max: sorted.length === 0 ? Number.NaN : (sorted[sorted.length - 1] as number),
  };
}

/** The median of repetitions and how far they spread around it. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  /** (max − min) / median, in percent. */
  readonly spreadPct: number;
  readonly values: readonly number[];
}

export function spreadOf(values: readonly number[]): Spread {
  const m = median(values);
  const min = Math.min(...values);
  const max = Math.max(...values);
  return { median: m, min, max, spreadPct: m === 0 || !Number.isFinite(m) ? Number.NaN : ((max - min) / m) * 100, values };
}
