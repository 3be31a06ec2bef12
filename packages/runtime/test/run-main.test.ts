import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * A tiny service on runMain, run as its own process (from the built packages). MODE picks its
 * behaviour: `ok` starts, `fail` fails to start, `stop-fails` fails to stop, `hang` never finishes
 * starting, `slow-stop` takes 300 ms to stop, `linger` leaves a timer running that nothing closes,
 * `old-node` runs as Node 20 says it is.
 */
const PROBE = `
import { runMain } from '@gatehouse/runtime';
import { createLogger } from '@gatehouse/telemetry';
const mode = process.env.MODE;
// What an older Node says of itself (the one this test runs on is supported).
if (mode === 'old-node') Object.defineProperty(process.versions, 'node', { value: '20.20.2' });
const logger = createLogger('probe');
await runMain({
  name: 'probe service',
  logger,
  drainTimeoutMs: 1234,
  start: async (teardown) => {
    // What a real service's open sockets do: keep the process alive until closed.
    const connection = setInterval(() => undefined, 60_000);
    teardown.add(() => clearInterval(connection));
    teardown.add(() => logger.info('closed redis'));
    if (mode === 'linger') setInterval(() => undefined, 60_000);
    if (mode === 'fail') throw new Error('broker unreachable');
    teardown.add(async ({ drainTimeoutMs }) => {
      if (mode === 'slow-stop') await new Promise((resolve) => setTimeout(resolve, 300));
      if (mode === 'stop-fails') throw new Error('publisher disconnect failed');
      logger.info({ drainTimeoutMs }, 'stopped service');
    });
    if (mode === 'hang') {
      logger.info('starting');
      await new Promise(() => undefined);
    }
    return { url: 'http://probe.test' };
  },
});
`;

interface Line {
  readonly level: number;
  readonly msg: string;
  readonly [field: string]: unknown;
}

interface Probe {
  lines(): Line[];
  waitFor(msg: string): Promise<void>;
  signal(signal: NodeJS.Signals): void;
  readonly exited: Promise<number | null>;
}

function runProbe(mode: string): Probe {
  const child = spawn(process.execPath, ['--input-type=module', '-e', PROBE], {
    cwd: REPO_ROOT,
    env: { PATH: process.env['PATH'] ?? '', MODE: mode, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const waiters: (() => void)[] = [];
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
    for (const wake of waiters.splice(0)) wake();
  });
  const lines = (): Line[] =>
    out
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Line);
  // 'close', not 'exit': the output is read to its end.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return {
    lines,
    exited,
    signal: (signal) => void child.kill(signal),
    waitFor: async (msg) => {
      while (!lines().some((line) => line.msg === msg)) {
        const more = new Promise<void>((resolve) => waiters.push(resolve));
        const gone = exited.then(() => Promise.reject(new Error(`exited before logging "${msg}": ${out}`)));
        await Promise.race([more, gone]);
      }
    },
  };
}

const messages = (probe: Probe): string[] => probe.lines().map((line) => line.msg);

describe('runMain', { timeout: 20_000 }, () => {
  it('says ready with the fields start-up returned, then on SIGTERM drains, closes newest first and exits 0', async () => {
    const probe = runProbe('ok');
    await probe.waitFor('probe service ready');
    expect(probe.lines().find((line) => line.msg === 'probe service ready')).toMatchObject({ url: 'http://probe.test' });
    probe.signal('SIGTERM');
    expect(await probe.exited).toBe(0);
    expect(messages(probe)).toEqual(['probe service ready', 'stopping: finishing in-flight work', 'stopped service', 'closed redis']);
    expect(probe.lines().find((line) => line.msg === 'stopped service')).toMatchObject({ drainTimeoutMs: 1234 });
  });

  it('stops on SIGINT too, and only once when a second signal arrives while stopping', async () => {
    const probe = runProbe('slow-stop');
    await probe.waitFor('probe service ready');
    probe.signal('SIGINT');
    await probe.waitFor('stopping: finishing in-flight work');
    probe.signal('SIGTERM');
    expect(await probe.exited).toBe(0);
    expect(messages(probe)).toEqual([
      'probe service ready',
      'stopping: finishing in-flight work',
      'already stopping',
      'stopped service',
      'closed redis',
    ]);
  });

  it('exits within a second of its stop even when something it opened lingers', async () => {
    const probe = runProbe('linger');
    await probe.waitFor('probe service ready');
    const signalled = Date.now();
    probe.signal('SIGTERM');
    expect(await probe.exited).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(5_000);
    expect(messages(probe)).toContain('closed redis');
  });

  it('logs a failed start-up as fatal, closes what had started and exits 1', async () => {
    const probe = runProbe('fail');
    expect(await probe.exited).toBe(1);
    expect(messages(probe)).toEqual(['probe service failed to start', 'closed redis']);
    expect(probe.lines()[0]).toMatchObject({ level: 60, err: { message: 'broker unreachable' } });
  });

  it('on a Node it does not support, names the Node it needs and exits 1 before starting anything', async () => {
    const probe = runProbe('old-node');
    expect(await probe.exited).toBe(1);
    expect(messages(probe)).toEqual(['probe service failed to start: Gatehouse needs Node ^22.22.0 || >=24.0.0; this is Node 20.20.2']);
    expect(probe.lines()[0]).toMatchObject({ level: 60, node: '20.20.2' });
  });

  it('exits 1 when a step of the stop fails, after running the others', async () => {
    const probe = runProbe('stop-fails');
    await probe.waitFor('probe service ready');
    probe.signal('SIGTERM');
    expect(await probe.exited).toBe(1);
    expect(messages(probe)).toEqual(['probe service ready', 'stopping: finishing in-flight work', 'closed redis', 'shutdown failed']);
  });

  it('closes what has started and exits 0 on a signal during start-up, never saying ready', async () => {
    const probe = runProbe('hang');
    await probe.waitFor('starting');
    probe.signal('SIGTERM');
    expect(await probe.exited).toBe(0);
    expect(messages(probe)).toEqual(['starting', 'stopping: finishing in-flight work', 'stopped service', 'closed redis']);
  });
});
