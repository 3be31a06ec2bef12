// Shared helpers for deploy/local/stack.mjs: paths, pid files, process checks, port and HTTP
// probes, detached spawning, log tails and JDK discovery. Node builtins only.
import { spawn, execFile } from 'node:child_process';
import { openSync, closeSync, writeSync } from 'node:fs';
import { mkdir, readFile, writeFile, rm, readdir, access, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import http from 'node:http';
import https from 'node:https';

export const HERE = dirname(fileURLToPath(import.meta.url));
export const REPO = resolve(HERE, '..', '..');
export const STACK = join(REPO, '.stack');
export const LOGS = join(STACK, 'logs');
export const PIDS = join(STACK, 'pids');
export const CACHE = process.env.GATEHOUSE_CACHE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'gatehouse');

export class StackError extends Error {}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const exists = (p) =>
  access(p).then(
    () => true,
    () => false,
  );

export async function ensureDirs() {
  await Promise.all([LOGS, PIDS].map((d) => mkdir(d, { recursive: true })));
}

/** Run a command; resolves { code, stdout, stderr }, never rejects (code 127 = not found). */
export function run(cmd, args, opts = {}) {
  return new Promise((res) => {
    execFile(cmd, args, { maxBuffer: 16 << 20, ...opts }, (err, stdout, stderr) => {
      const code = err ? (err.code === 'ENOENT' ? 127 : typeof err.code === 'number' ? err.code : 1) : 0;
      res({ code, stdout: String(stdout ?? ''), stderr: String(stderr ?? '') });
    });
  });
}

export async function onPath(cmd) {
  for (const dir of (process.env.PATH || '').split(':').filter(Boolean)) {
    if (await exists(join(dir, cmd))) return true;
  }
  return false;
}

// ---------------------------------------------------------------- pid files and processes

const pidFile = (name) => join(PIDS, `${name}.pid`);

export async function readPid(name) {
  const text = await readFile(pidFile(name), 'utf8').catch(() => '');
  const pid = Number.parseInt(text.trim(), 10);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}
export const writePid = (name, pid) => writeFile(pidFile(name), `${pid}\n`);
export const removePid = (name) => rm(pidFile(name), { force: true });

/** True when pid is a live (non-zombie) process whose command line contains `pattern`. */
export async function processMatches(pid, pattern) {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return false; // zombie = dead
    const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).replaceAll('\0', ' ');
    return cmdline.includes(pattern);
  } catch {
    return false;
  }
}

/** The pid of our running process for `name`, or null (a stale pid file is removed). */
export async function ourPid(name, pattern) {
  const pid = await readPid(name);
  if (pid === null) return null;
  if (await processMatches(pid, pattern)) return pid;
  await removePid(name);
  return null;
}

/** SIGTERM, wait up to `graceMs`, then SIGKILL. Only after checking the pid is still ours. */
export async function terminate(pid, pattern, graceMs = 20_000) {
  if (!(await processMatches(pid, pattern))) return 'gone';
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    await sleep(200);
    if (!(await processMatches(pid, pattern))) return 'stopped';
  }
  if (await processMatches(pid, pattern)) process.kill(pid, 'SIGKILL');
  return 'killed';
}

/**
 * Spawn a long-running process detached from this script, stdout+stderr appended to `logPath`.
 * Returns { pid, exited() } where exited() tells whether it already died while we wait for it.
 */
export function spawnDetached(cmd, args, { cwd, logPath, env }) {
  const fd = openSync(logPath, 'a');
  writeSync(fd, `\n=== ${new Date().toISOString()} ${cmd} ${args.join(' ')}\n`);
  const child = spawn(cmd, args, { cwd, env: env ?? process.env, detached: true, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exitInfo = null;
  child.on('exit', (code, signal) => (exitInfo = { code, signal }));
  child.on('error', (err) => (exitInfo = { code: null, signal: null, error: err }));
  child.unref();
  return { pid: child.pid, exited: () => exitInfo };
}

export const fileSize = async (path) => (await stat(path).catch(() => ({ size: 0 }))).size;

export async function tail(path, lines = 20, fromOffset = 0) {
  const buf = await readFile(path).catch(() => Buffer.alloc(0));
  return buf.subarray(fromOffset).toString('utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

/** What a log gained since `fromOffset`: its first three ERROR/FATAL entries and its last 20 lines. */
export async function logExcerpt(path, fromOffset = 0) {
  const buf = await readFile(path).catch(() => Buffer.alloc(0));
  const lines = buf.subarray(fromOffset).toString('utf8').trimEnd().split('\n');
  const errors = [];
  lines.forEach((line, i) => {
    if (errors.length >= 6 || !/\b(ERROR|FATAL)\b/.test(line)) return;
    const next = lines[i + 1] ?? '';
    errors.push(line, ...(next && !/^(\t|\[|\d{4}-)/.test(next) ? [next] : [])); // + exception message
  });
  const first = errors.length ? `--- ${path}, first errors:\n${errors.join('\n')}\n` : '';
  return `${first}--- ${path}, last lines:\n${lines.slice(-20).join('\n')}`;
}

/** Poll `probe` until it returns truthy; fail early if `dead()` returns a reason. */
export async function waitFor(probe, { timeoutMs, intervalMs = 500, dead = () => null }) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe().catch(() => false)) return;
    const reason = await dead();
    if (reason) throw new StackError(reason);
    if (Date.now() > deadline) throw new StackError(`not ready after ${timeoutMs / 1000}s`);
    await sleep(intervalMs);
  }
}

// ---------------------------------------------------------------- network probes

/** Connect to host:port; optionally write `send` and resolve with the first chunk received. */
export function tcpProbe(host, port, { send, timeoutMs = 3000 } = {}) {
  return new Promise((res) => {
    const sock = net.connect({ host, port });
    const done = (v) => (sock.destroy(), res(v));
    sock.setTimeout(timeoutMs, () => done(false));
    sock.on('error', () => done(false));
    sock.on('connect', () => (send ? sock.write(send) : done(true)));
    sock.on('data', (buf) => done(buf.toString('utf8')));
  });
}

export function httpStatus(url, timeoutMs = 2000) {
  return new Promise((res) => {
    const req = (url.startsWith('https:') ? https : http).get(url, { timeout: timeoutMs }, (resp) => (resp.resume(), res(resp.statusCode)));
    req.on('timeout', () => req.destroy());
    req.on('error', () => res(0));
  });
}

/** "host:port" or a URL → { host, port }. */
export function hostPort(address, defaultPort) {
  const u = new URL(address.includes('://') ? address : `tcp://${address}`);
  return { host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port || defaultPort) };
}

// ---------------------------------------------------------------- kafkajs and Java

/** kafkajs from the repo root's node_modules (createRequire also honours NODE_PATH). */
export function loadKafkajs() {
  try {
    return createRequire(join(REPO, 'package.json'))('kafkajs');
  } catch {
    throw new StackError('kafkajs is not installed: run `npm install` at the repo root.');
  }
}

/** Major version of a JDK/JRE home (from its `release` file, else `java -version`), or 0. */
export async function javaMajor(javaBin) {
  const home = javaBin.startsWith('/') ? dirname(dirname(javaBin)) : null;
  const release = home ? await readFile(join(home, 'release'), 'utf8').catch(() => '') : '';
  let m = release.match(/^JAVA_VERSION="(\d+)(?:\.(\d+))?/m);
  if (!m) m = (await run(javaBin, ['-version'])).stderr.match(/version "(\d+)(?:\.(\d+))?/);
  if (!m) return 0;
  return m[1] === '1' ? Number(m[2]) : Number(m[1]);
}

/** A java binary with major >= min: `$explicitVar` home, else $JAVA_HOME, else the newest in /usr/lib/jvm. */
export async function findJava(min, explicitVar) {
  const explicit = process.env[explicitVar];
  if (explicit) {
    const bin = join(explicit, 'bin', 'java');
    const major = await javaMajor(bin);
    if (major >= min) return { bin, major };
    throw new StackError(`${explicitVar}=${explicit} is ${major ? `Java ${major}` : 'not a JDK (no bin/java)'}.`);
  }
  if (process.env.JAVA_HOME) {
    const bin = join(process.env.JAVA_HOME, 'bin', 'java');
    const major = await javaMajor(bin);
    if (major >= min) return { bin, major };
  }
  let best = null;
  for (const dir of await readdir('/usr/lib/jvm').catch(() => [])) {
    const bin = join('/usr/lib/jvm', dir, 'bin', 'java');
    const major = (await exists(bin)) ? await javaMajor(bin) : 0;
    if (major >= min && (!best || major > best.major)) best = { bin, major };
  }
  if (best) return best;
  throw new StackError(
    `none found in $JAVA_HOME or /usr/lib/jvm/*. Install one (e.g. Temurin ${min}) ` + `and set ${explicitVar} to its home directory.`,
  );
}

let mavenQueue = Promise.resolve();

/**
 * Run `mvn args` after any other Maven run of this process has finished (components start in
 * parallel, but concurrent Maven runs sharing ~/.m2 are not safe). Resolves like run().
 */
export async function mvn(args, opts) {
  if (!(await onPath('mvn'))) {
    throw new StackError('Maven (`mvn`) is not on PATH; it is needed once to download the Java artifacts into the cache.');
  }
  const result = mavenQueue.then(() => run('mvn', ['-q', '-B', ...args], opts));
  mavenQueue = result;
  return result;
}
