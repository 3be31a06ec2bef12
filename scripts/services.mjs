// Starts Gatehouse's services as child processes (the way they run in production), each logging
// JSON to .stack/logs/<name>.log, and resolves once every one has said it is ready.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;

/** Service name → entrypoint and the log message that says it is ready. */
export const SERVICES = {
  customers: { main: 'services/customers/dist/main.js', ready: 'customers service listening', url: (env) => `http://127.0.0.1:${env.CUSTOMERS_PORT ?? 8090}` },
  policy: { main: 'services/policy/dist/main.js', ready: 'policy service ready', url: (env) => `http://127.0.0.1:${env.POLICY_PORT ?? 8091}` },
  approval: { main: 'services/approval/dist/main.js', ready: 'approval service ready', url: (env) => `http://127.0.0.1:${env.APPROVAL_PORT ?? 8093}` },
  executor: { main: 'services/executor/dist/main.js', ready: 'executor ready', url: () => null },
};

/**
 * @param {{ names: string[], env: Record<string,string>, logsDir?: string, say?: (line: string) => void, timeoutMs?: number }} options
 */
export async function startServices({ names, env, logsDir = join(root, '.stack', 'logs'), say = () => {}, timeoutMs = 90_000 }) {
  mkdirSync(logsDir, { recursive: true });
  const children = [];
  const stop = async () => {
    await Promise.all(
      children.map(
        (c) =>
          new Promise((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            const timer = setTimeout(() => c.kill('SIGKILL'), 15_000);
            c.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            c.kill('SIGTERM');
          }),
      ),
    );
  };
  try {
    await Promise.all(
      names.map((instance) => {
        const kind = instance.replace(/-\d+$/, '');
        const service = SERVICES[kind];
        if (service === undefined) throw new Error(`unknown service ${instance}`);
        const started = Date.now();
        const log = createWriteStream(join(logsDir, `${instance}.log`), { flags: 'a' });
        const child = spawn(process.execPath, [service.main], {
          cwd: root,
          env: { ...process.env, ...env, ...(kind === 'executor' ? { EXECUTOR_ID: `${instance}-${process.pid}` } : {}) },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        children.push(child);
        child.stderr.pipe(log);
        // The last lines a service wrote before it died name the reason; the error carries them.
        let last = '';
        const keep = (chunk) => (last = (last + chunk.toString('utf8')).slice(-2048));
        child.stderr.on('data', keep);
        return new Promise((resolve, reject) => {
          let buffered = '';
          let ready = false;
          const timer = setTimeout(() => reject(new Error(`${instance} not ready within ${timeoutMs} ms; see ${join(logsDir, `${instance}.log`)}`)), timeoutMs);
          child.stdout.on('data', (chunk) => {
            log.write(chunk);
            if (ready) return;
            keep(chunk);
            buffered = (buffered + chunk.toString('utf8')).slice(-8192);
            if (!buffered.includes(service.ready)) return;
            ready = true;
            clearTimeout(timer);
            const url = service.url(env);
            say(`${instance.padEnd(10)} ready   ${`${((Date.now() - started) / 1000).toFixed(1)}s`.padEnd(6)} ${url ?? `pid ${child.pid}`}`);
            resolve();
          });
          // 'close' comes after the child's output is read to the end, so the tail is complete.
          child.once('close', (code, signal) => {
            clearTimeout(timer);
            if (ready) return;
            const tail = last.split('\n').filter((line) => line.trim() !== '' && !/^\s+at /.test(line)).slice(-6).map((line) => `   | ${line.slice(0, 400)}`).join('\n');
            reject(new Error(`${instance} exited (${code ?? signal}) before it was ready; see ${join(logsDir, `${instance}.log`)}${tail === '' ? '' : `\n${tail}`}`));
          });
        });
      }),
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { children, stop };
}
