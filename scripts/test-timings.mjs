// The per-file timing table `npm test` prints after each vitest run: where the time of a run goes,
// read from vitest's JSON report (test-artifacts/), slowest first.
import { existsSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;

/** The table of one run's test files, slowest first: seconds, tests, status and path. */
export function timingTable(reportPath, title) {
  if (!existsSync(reportPath)) return `(no timings: ${relative(root, reportPath)} was not written)`;
  const report = JSON.parse(readFileSync(reportPath, 'utf8'));
  const files = (report.testResults ?? []).map((file) => ({
    path: relative(root, file.name),
    seconds: Math.max(0, (file.endTime ?? 0) - (file.startTime ?? 0)) / 1000,
    tests: (file.assertionResults ?? []).length,
    status: file.status,
  }));
  files.sort((a, b) => b.seconds - a.seconds);
  const total = files.reduce((sum, f) => sum + f.seconds, 0);
  const lines = [
    `${title}: ${files.length} files, ${total.toFixed(0)} s in their tests (set-up and tear-down hooks not counted)`,
    '    s  tests  status  file',
  ];
  for (const f of files)
    lines.push(`${f.seconds.toFixed(1).padStart(5)}  ${String(f.tests).padStart(5)}  ${String(f.status).padEnd(6)}  ${f.path}`);
  return lines.join('\n');
}

/**
 * The tests of one run that failed, a line each with the first line of what failed: `npm test`
 * prints them last, after the stack is down, so that the tail of a long log names them.
 */
export function failureLines(reportPath) {
  if (!existsSync(reportPath)) return [];
  const report = JSON.parse(readFileSync(reportPath, 'utf8'));
  const lines = [];
  for (const file of report.testResults ?? []) {
    const failed = (file.assertionResults ?? []).filter((test) => test.status === 'failed');
    const path = relative(root, file.name);
    // A file that failed outside its tests (a hook, an import) has no failed test to name.
    if (failed.length === 0 && file.status === 'failed') lines.push(`${path}: ${firstLine(file.message)}`);
    for (const test of failed) lines.push(`${path} > ${test.fullName ?? test.title}: ${firstLine(test.failureMessages?.[0])}`);
  }
  return lines;
}

const firstLine = (text) =>
  String(text ?? '(no message)')
    .split('\n')
    .find((line) => line.trim() !== '')
    ?.trim()
    .slice(0, 300) ?? '(no message)';
