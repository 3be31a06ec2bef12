import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, tracerFor, tracesUrl } from '@gatehouse/telemetry';

describe('span export', () => {
  const received: { path: string; body: string }[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks);
      received.push({
        path: request.url ?? '',
        body: (request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8'),
      });
      response.writeHead(200).end('{}');
    });
  });
  let endpoint = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('appends the traces path to the base endpoint', () => {
    expect(tracesUrl('http://collector:4318')).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl('https://collector:4318/otel/')).toBe('https://collector:4318/otel/v1/traces');
  });

  it('refuses an endpoint that is not an http or https URL, naming the variable', () => {
    for (const bad of ['collector:4318', 'ftp://collector', 'http://']) {
      expect(() => startTracing({ serviceName: 'gatehouse-test', env: { OTEL_EXPORTER_OTLP_ENDPOINT: bad } }), bad).toThrow(
        /OTEL_EXPORTER_OTLP_ENDPOINT/,
      );
    }
  });

  it('registers nothing when no endpoint is set', async () => {
    const tracing = startTracing({ serviceName: 'gatehouse-test', env: {} });
    expect(tracing.exporting).toBe(false);
    expect(tracerFor('test').startSpan('nothing').isRecording()).toBe(false);
    await tracing.shutdown();
  });

  it('exports spans under the service name until the last user lets go, flushing them then', async () => {
    const first = startTracing({ serviceName: 'gatehouse-test', env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } });
    const second = startTracing({ serviceName: 'gatehouse-other', endpoint });
    expect([first.exporting, second.exporting]).toEqual([true, true]);
    tracerFor('test').startSpan('one').end();
    await first.shutdown();
    await first.shutdown();
    const span = tracerFor('test').startSpan('two');
    expect(span.isRecording()).toBe(true);
    span.end();
    await second.shutdown();
    expect(tracerFor('test').startSpan('three').isRecording()).toBe(false);

    expect(received.map((r) => r.path)).toContain('/v1/traces');
    const all = received.map((r) => r.body).join('\n');
    expect(all).toContain('"one"');
    expect(all).toContain('"two"');
    expect(all).not.toContain('"three"');
    // One provider for the process: the first user's service name.
    expect(all).toContain('gatehouse-test');
    expect(all).not.toContain('gatehouse-other');
    expect(trace.getTracerProvider().getTracer('x').startSpan('y').isRecording()).toBe(false);
  });

  it('keeps a component’s tracer exporting through whichever provider is registered now', async () => {
    const kept = tracerFor('kept');
    expect(kept.startSpan('before').isRecording()).toBe(false);
    received.length = 0;
    for (const round of ['first', 'second']) {
      const tracing = startTracing({ serviceName: `gatehouse-${round}`, endpoint });
      kept.startSpan(`span-${round}`).end();
      await tracing.shutdown();
      expect(kept.startSpan('between').isRecording()).toBe(false);
    }
    const all = received.map((r) => r.body).join('\n');
    expect(all).toContain('"span-first"');
    expect(all).toContain('"span-second"');
    expect(all).toContain('gatehouse-second');
  });

  it('names the service by OTEL_SERVICE_NAME when it is set', async () => {
    received.length = 0;
    const tracing = startTracing({
      serviceName: 'gatehouse-test',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SERVICE_NAME: 'billing-policy' },
    });
    tracerFor('test').startSpan('named').end();
    await tracing.shutdown();
    expect(received.map((r) => r.body).join('\n')).toContain('billing-policy');
  });
});
