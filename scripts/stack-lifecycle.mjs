// Brings the local stack up for a command and remembers exactly what that command started.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;

const NOT_UP = 'the local stack did not come up; see .stack/logs/';

/** The components `stack.mjs up --json` says it started: its last line is the summary. */
function startedIn(output) {
  const last = output.trim().split('\n').pop() || '{}';
  return JSON.parse(last).started ?? [];
}

/** Starts what is not running; returns the components this call started. */
export function stackUp() {
  const run = spawnSync(process.execPath, ['deploy/local/stack.mjs', 'up', '--json'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(NOT_UP);
  return startedIn(run.stdout);
}

/**
 * Starts what is not running without waiting for it. The stack script writes to files, not pipes,
 * so it never waits on a caller that is busy. `done()` prints its progress where the caller awaits
 * it and resolves to the components started (or rejects if the stack did not come up); `started()`
 * resolves to them quietly, for a run that is being stopped.
 */
export function stackUpInBackground() {
  mkdirSync(join(root, 'test-artifacts'), { recursive: true });
  const out = join(root, 'test-artifacts', 'stack-up.out');
  const err = join(root, 'test-artifacts', 'stack-up.log');
  const stdout = openSync(out, 'w');
  const stderr = openSync(err, 'w');
  const child = spawn(process.execPath, ['deploy/local/stack.mjs', 'up', '--json'], { cwd: root, stdio: ['ignore', stdout, stderr] });
  closeSync(stdout);
  closeSync(stderr);
  const outcome = new Promise((resolve) => {
    child.on('error', () => resolve(1));
    child.on('exit', (code) => resolve(code ?? 1));
  }).then((code) => (code === 0 ? startedIn(readFileSync(out, 'utf8')) : new Error(NOT_UP)));
  return {
    async done() {
      const started = await outcome;
      process.stderr.write(readFileSync(err, 'utf8'));
      if (started instanceof Error) throw started;
      return started;
    },
    async started() {
      const started = await outcome;
      return started instanceof Error ? [] : started;
    },
  };
}

/** Stops the components a stackUp() call started, and nothing else. */
export function stackDown(started) {
  if (started.length === 0) return;
  spawnSync(process.execPath, ['deploy/local/stack.mjs', 'down', ...started], { cwd: root, stdio: 'inherit' });
}

/** Builds the workspace (incremental). */
export function build() {
  const run = spawnSync(process.execPath, ['scripts/tsc.mjs', '-b'], { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) throw new Error('the build failed');
}
