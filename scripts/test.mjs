// `npm test`: check the machine's prerequisites, bring the local stack up if it is not running (in the
// background), type-check, lint, check formatting and unused code, validate the deployment manifests, run every vitest
// project, and stop only what this run started. Extra arguments go to vitest.
import { spawn, spawnSync } from 'node:child_process';
import { NODE22, requirePrerequisites } from './prerequisites.mjs';
import { stackDown, stackUpInBackground } from './stack-lifecycle.mjs';
import { failureLines, timingTable } from './test-timings.mjs';

const root = new URL('..', import.meta.url).pathname;

function step(title, command, args, options = {}) {
  process.stderr.write(`\n▶ ${title}\n`);
  const run = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  if (run.status !== 0) {
    process.stderr.write(`✖ ${title} failed (exit ${run.status ?? run.signal})\n`);
  }
  return run.status === 0;
}

let runs = 0;
/** Every failed test of this `npm test`, printed last. */
const failures = [];
/** Runs vitest; afterwards prints how long each of its files took (from its JSON report). */
function runVitest(title, args, node = process.execPath) {
  const report = `${root}test-artifacts/vitest-timings-${(runs += 1)}.json`;
  const reporters = ['--reporter=default', '--reporter=json', `--outputFile.json=${report}`];
  return new Promise((resolve) => {
    process.stderr.write(`\n▶ ${title}\n`);
    const child = spawn(node, ['node_modules/vitest/vitest.mjs', 'run', ...reporters, ...args], { cwd: root, stdio: 'inherit' });
    child.on('exit', (code) => {
      process.stderr.write(`\n${timingTable(report, title)}\n`);
      failures.push(...failureLines(report).map((line) => `${title}: ${line}`));
      resolve(code === 0);
    });
  });
}

// Every missing prerequisite is named before anything starts (Chromium and the Node 22 of the
// conformance suite and the unit tests are installed when we can).
await requirePrerequisites({ browser: true, faketime: true, node22: true, spin: true });
// The stack comes up while the checks and the unit tests run, and what it started is stopped
// however this run ends.
const stack = stackUpInBackground();
let stopping = false;
const stop = async () => {
  if (stopping) return; // one Ctrl-C can arrive by more than one path
  stopping = true;
  stackDown(await stack.started());
  process.exit(130);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
const extra = process.argv.slice(2);
let ok =
  step('typecheck', 'npm', ['run', '--silent', 'typecheck']) &&
  step('lint', 'npm', ['run', '--silent', 'lint']) &&
  step('format (Prettier; `npm run format` fixes it)', 'npm', ['run', '--silent', 'format:check']) &&
  step('unused files, exports and dependencies (knip)', 'npm', ['run', '--silent', 'knip']) &&
  step('deployment manifests', process.execPath, ['scripts/validate-manifests.mjs']) &&
  // Node 22 LTS stays supported: the unit tests run on it (what crosses a boundary runs on Node 24 below).
  (await runVitest(
    `vitest: unit, on Node ${spawnSync(NODE22, ['--version'], { encoding: 'utf8' }).stdout.trim()}`,
    ['--project', 'unit', '--passWithNoTests', ...extra],
    NODE22,
  ));
let started = [];
process.stderr.write('\n▶ local stack (brought up in the background since the start)\n');
try {
  started = await stack.done();
} catch (error) {
  process.stderr.write(`✖ ${error.message}\n`);
  ok = false;
}
if (ok) {
  try {
    // The unit tests ran on Node 22 above; what crosses a boundary runs on Node 24. The fault tests
    // restart the broker and Redis, so they never run beside the others.
    ok = await runVitest('vitest: integration', ['--project', 'integration', ...extra]);
    ok =
      (await runVitest('vitest: faults (broker and Redis restarts, kills, cluster failovers, fuzz), one file at a time', [
        '--project',
        'faults',
        '--passWithNoTests',
        ...extra,
      ])) && ok;
  } catch (error) {
    process.stderr.write(`✖ ${error.message}\n`);
    ok = false;
  }
}
stackDown(started);
if (failures.length > 0)
  process.stderr.write(`\n✖ failed tests (${failures.length}):\n${failures.map((line) => `  ${line}`).join('\n')}\n`);
process.exit(ok ? 0 : 1);
