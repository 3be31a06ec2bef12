import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { healthOf, startOpsServer } from '@gatehouse/runtime';
import type { OpsServer } from '@gatehouse/runtime';
import { createLogger, GatehouseMetrics } from '@gatehouse/telemetry';

/** A logger whose JSON lines are kept for the test to read. */
function capturedLogger(): { logger: ReturnType<typeof createLogger>; lines: () => { msg: string; level: number }[] } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = createLogger('ops-test', { level: 'info', destination });
  const lines = () =>
    chunks
      .join('')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { msg: string; level: number });
  return { logger, lines };
}

const started: OpsServer[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((server) => server.stop()));
});

async function start(options: { port?: number; ready?: boolean } = {}) {
  const { logger, lines } = capturedLogger();
  const server = await startOpsServer({
    host: '127.0.0.1',
    port: options.port ?? 0,
    health: healthOf({ kafka: () => Promise.resolve(options.ready ?? true), redis: () => Promise.resolve(true) }),
    metrics: new GatehouseMetrics(),
    logger,
  });
  started.push(server);
  return { server, lines };
}

describe('startOpsServer', () => {
  it('serves /healthz, /readyz and /metrics on a free port', async () => {
    const { server } = await start();
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const healthz = await fetch(`${server.url}/healthz`);
    expect([healthz.status, await healthz.json()]).toEqual([200, { status: 'up' }]);
    const readyz = await fetch(`${server.url}/readyz`);
    expect([readyz.status, await readyz.json()]).toEqual([200, { ready: true, checks: { kafka: 'ok', redis: 'ok' } }]);
    const metrics = await fetch(`${server.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    expect(await metrics.text()).toContain('gatehouse_');
  });

  it('answers /readyz 503 with the failing check named', async () => {
    const { server } = await start({ ready: false });
    const readyz = await fetch(`${server.url}/readyz`);
    expect([readyz.status, await readyz.json()]).toEqual([503, { ready: false, checks: { kafka: 'not ready', redis: 'ok' } }]);
  });

  it('answers 404 for any other route or method', async () => {
    const { server } = await start();
    expect((await fetch(`${server.url}/runs`)).status).toBe(404);
    expect((await fetch(`${server.url}/healthz`, { method: 'POST' })).status).toBe(404);
  });

  it('logs a port already taken and serves nothing, without failing the service', async () => {
    const { server: first } = await start();
    const port = Number(new URL(first.url ?? '').port);
    const { server: second, lines } = await start({ port });
    expect(second.url).toBeUndefined();
    expect(lines()).toContainEqual(
      expect.objectContaining({ level: 50, msg: 'ops port in use: /metrics, /healthz and /readyz are not served' }),
    );
    await second.stop();
  });

  it('stops listening when stopped', async () => {
    const { server } = await start();
    await server.stop();
    started.splice(started.indexOf(server), 1);
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });
});
