import { usageError } from './exit-code.js';

const UNITS: readonly (readonly [string, number])[] = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
];

/** `90061000` → `1d1h1m`; below a second, milliseconds. Two units at most: enough to read. */
export function formatDuration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1_000) return `${Math.round(abs)}ms`;
  const parts: string[] = [];
  let rest = abs;
  for (const [unit, size] of UNITS) {
    if (rest >= size && parts.length < 2) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    } else if (parts.length > 0) break;
  }
  return parts.join('');
}

/** `in 14m59s` or `3m ago`, relative to `now`. */
export function relativeTime(at: number, now: number): string {
  return at >= now ? `in ${formatDuration(at - now)}` : `${formatDuration(now - at)} ago`;
}

export function isoTime(at: number | null | undefined): string {
  return at === null || at === undefined || !Number.isFinite(at) ? '-' : new Date(at).toISOString();
}

/** `1536` → `1.5 KiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

const DURATION = /^(\d+)(ms|s|m|h|d)?$/;
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `900000`, `90s`, `15m`, `2h`, `1d` → milliseconds; anything else is a usage error naming `what`. */
export function parseDuration(text: string, what: string): number {
  const match = DURATION.exec(text.trim());
  const value = match?.[1] === undefined ? Number.NaN : Number(match[1]) * (UNIT_MS[match[2] ?? 'ms'] ?? Number.NaN);
  if (!Number.isSafeInteger(value) || value <= 0) throw usageError(`${what} must be a duration like 900000, 90s, 15m or 2h, got "${text}"`);
  return value;
}

export function parsePositiveInt(text: string, what: string): number {
  const value = /^\d+$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < 1) throw usageError(`${what} must be a positive integer, got "${text}"`);
  return value;
}
