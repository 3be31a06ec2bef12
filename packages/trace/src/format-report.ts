import { describeDecision } from './replay-types.js';
import type { ReplayReport } from './replay-types.js';

function table(rows: readonly (readonly string[])[]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/** A replay report for people: the catalog, one row per call, then the invariants. */
export function formatReport(report: ReplayReport): string {
  const short = (sha: string): string => sha.slice(0, 12);
  const lines = [
    report.catalogChanged
      ? `catalog changed: ${short(report.catalog.recorded)} → ${short(report.catalog.current)}`
      : `catalog unchanged: ${short(report.catalog.current)}`,
    `${report.calls.length} call(s) replayed, ${report.differences} differ`,
    '',
    ...table([
      ['', 'COMMAND', 'TOOL', 'RECORDED', 'REPLAYED', 'WHY'],
      ...report.calls.map((c) => [
        c.differs ? '≠' : '=',
        c.command_id,
        c.tool,
        describeDecision(c.before),
        describeDecision(c.after),
        c.why,
      ]),
    ]),
    '',
    'invariants:',
    ...table(report.invariants.map((i) => [`  ${i.holds ? 'holds' : 'BROKEN'}`, i.name, i.detail])),
  ];
  return `${lines.join('\n')}\n`;
}
