import { fmt, pad, padLeft } from './report-format.js';
import type { Target, VariantResult } from './report.js';

/** Each anchor's read and write beside Gatehouse's (c) and (d) at the same size: the pairs the targets compare. */
function anchorPairs(results: readonly VariantResult[]) {
  return results
    .filter((r) => r.arm === 'restate' || r.arm === 'dbos')
    .flatMap((anchor) => {
      const write = anchor.id.includes('-write-');
      const gatehouse = results.find((r) => r.id === `${write ? 'd' : 'c'}-${anchor.argumentBytes}`);
      return gatehouse === undefined ? [] : [{ anchor, gatehouse, path: write ? 'write' : 'read', arm: write ? '(d)' : '(c)' }];
    });
}

/**
 * Service CPU per 1,000 calls: an anchor's own processes; Gatehouse's policy and executor
 * processes. Neither counts its driver or the bench process (which holds other setups' idle parts).
 */
function serviceCpuOf(result: VariantResult): number | undefined {
  const cpu = result.cpuPer1000;
  if (cpu === null) return undefined;
  if (cpu.anchor !== null) return cpu.anchor.median;
  if (cpu.policy === null || cpu.executorsSum === null) return undefined;
  return cpu.policy.median + cpu.executorsSum.median;
}

/** Gatehouse's calls/s over the anchor's, and the anchor's service CPU per call over Gatehouse's (both goals ≥ 2×). */
function ratiosOf(anchor: VariantResult, gatehouse: VariantResult) {
  const mine = serviceCpuOf(gatehouse);
  const theirs = serviceCpuOf(anchor);
  return {
    throughput: gatehouse.throughput.median / anchor.throughput.median,
    cpu: mine === undefined || theirs === undefined ? Number.NaN : theirs / mine,
  };
}

/** Targets: Gatehouse's read and write each ≥ 2× an anchor's calls/s, at ≤ half its CPU per call. */
export function anchorTargets(results: readonly VariantResult[]): Target[] {
  return anchorPairs(results).flatMap(({ anchor, gatehouse, path, arm }) => {
    const { throughput, cpu } = ratiosOf(anchor, gatehouse);
    const name = anchor.label.split(' ')[0] ?? anchor.arm;
    return [
      { name: `${path} ${arm} / ${name}, calls/s`, goal: '≥ 2×', value: throughput, shown: `${fmt(throughput, 2)}×`, met: throughput >= 2 },
      {
        name: `${name} / ${path} ${arm}, service CPU per call`,
        goal: '≥ 2×',
        value: cpu,
        shown: `${fmt(cpu, 2)}×`,
        met: Number.isFinite(cpu) ? cpu >= 2 : null,
      },
    ];
  });
}

/** The anchors beside Gatehouse, same run: throughput, p99 and CPU per call of each, and the ratios. */
export function anchorSection(results: readonly VariantResult[]): string[] {
  const pairs = anchorPairs(results);
  if (pairs.length === 0) return [];
  const lines = [
    '',
    'Anchors — the same governed call on Restate and on DBOS, same run, same concurrency and payload (Ajv check of the same',
    'schema, an idempotency key per call; the write also runs one durable step), against (c) and (d)',
    [
      pad('', 28),
      padLeft('calls/s', 8),
      padLeft('p99 ms', 8),
      padLeft('svc CPU µs', 11),
      padLeft('driver µs', 10),
      '   Gatehouse: calls/s, CPU',
    ].join(' '),
  ];
  for (const { anchor, gatehouse, arm } of pairs) {
    const { throughput, cpu } = ratiosOf(anchor, gatehouse);
    const services = serviceCpuOf(anchor);
    lines.push(
      [
        pad(anchor.label, 28),
        padLeft(fmt(anchor.throughput.median), 8),
        padLeft(fmt(anchor.p99Ms.median), 8),
        padLeft(services === undefined ? '–' : fmt(services), 11),
        padLeft(anchor.cpuPer1000 === null ? '–' : fmt(anchor.cpuPer1000.driver.median), 10),
        `   ${arm} ${fmt(throughput, 2)}× the calls/s at ${Number.isFinite(cpu) ? fmt(1 / cpu, 2) : '–'}× the CPU`,
      ].join(' '),
    );
  }
  lines.push(
    "  svc CPU: every process of the anchor (server, SDK endpoint; PostgreSQL's backends for DBOS) per call, read from /proc;",
    "  Gatehouse's is its policy and executor processes. Neither counts its driver (an HTTP client for the anchors) or the bench process.",
  );
  return lines;
}
