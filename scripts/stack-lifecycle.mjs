// Brings the local stack up for a command and remembers exactly what that command started.
import { spawnSync } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;

/** Starts what is not running; returns the components this call started. */
export function stackUp() {
  const run = spawnSync(process.execPath, ['deploy/local/stack.mjs', 'up', '--json'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error('the local stack did not come up; see .stack/logs/');
  const last = run.stdout.trim().split('\n').pop() ?? '{}';
  return JSON.parse(last).started ?? [];
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
