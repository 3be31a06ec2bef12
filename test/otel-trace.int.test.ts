import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PendingNotice } from '@gatehouse/client';
import type { Run } from '@gatehouse/state';
import { TOKENS } from './support/approval.js';
import { decideAs } from './support/decide.js';
import { ExecutorFleet } from './support/fleet.js';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';
import { eventually } from './support/stack.js';
import { preview } from './support/writes.js';

/** One span as OTLP/HTTP JSON carries it, with its attributes flattened and its scope's name. */
interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly scope: string;
  readonly service: string;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  readonly statusCode: number;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpRequest {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: {
      scope?: { name?: string };
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        attributes?: OtlpAttribute[];
        status?: { code?: number };
      }[];
    }[];
  }[];
}

// OTLP/JSON writes ids as hex; protobuf-JSON mappings write base64: accept either.
const hexId = (id: string | undefined): string =>
  id === undefined || id === '' ? '' : /^[0-9a-f]+$/.test(id) ? id : Buffer.from(id, 'base64').toString('hex');
const valueOf = (value: OtlpValue): string | number | boolean =>
  value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.boolValue ?? value.doubleValue ?? '';
const flatten = (attributes: OtlpAttribute[] | undefined): Record<string, string | number | boolean> =>
  Object.fromEntries((attributes ?? []).map((a) => [a.key, valueOf(a.value)]));

/** A loopback OTLP/HTTP receiver: every request body as received, and the spans decoded from them. */
async function startReceiver(): Promise<{ url: string; bodies: string[]; spans: ReceivedSpan[]; paths: string[]; close(): Promise<void> }> {
  const bodies: string[] = [];
  const spans: ReceivedSpan[] = [];
  const paths: string[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks);
      const body = (request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
      paths.push(`${request.method ?? ''} ${request.url ?? ''} ${request.headers['content-type'] ?? ''}`);
      bodies.push(body);
      const decoded = JSON.parse(body) as OtlpRequest;
      for (const resourceSpans of decoded.resourceSpans ?? []) {
        const service = String(flatten(resourceSpans.resource?.attributes)['service.name'] ?? '');
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
          for (const span of scopeSpans.spans ?? []) {
            spans.push({
              traceId: hexId(span.traceId),
              spanId: hexId(span.spanId),
              parentSpanId: hexId(span.parentSpanId),
              name: span.name,
              scope: scopeSpans.scope?.name ?? '',
              service,
              attributes: flatten(span.attributes),
              statusCode: span.status?.code ?? 0,
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    spans,
    paths,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  receiver = await startReceiver();
  // The endpoint alone turns export on: the client, made last by startGatehouse, registers this
  // process's provider (the services started in this process export through it too).
  process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] = receiver.url;
  process.env['OTEL_BSP_SCHEDULE_DELAY'] = '100';
});
afterAll(async () => {
  delete process.env['OTEL_EXPORTER_OTLP_ENDPOINT'];
  delete process.env['OTEL_BSP_SCHEDULE_DELAY'];
  await receiver.close();
});

const spansOf = (commandId: string, count: number) =>
  eventually(
    () => {
      const found = receiver.spans.filter((s) => s.attributes['gatehouse.command_id'] === commandId);
      return found.length >= count ? found : undefined;
    },
    20_000,
    `${count} spans of ${commandId}`,
  );

const one = (spans: readonly ReceivedSpan[], name: string): ReceivedSpan => {
  const matching = spans.filter((s) => s.name === name);
  expect(
    matching.map((s) => s.name),
    name,
  ).toEqual([name]);
  return matching[0] as ReceivedSpan;
};

describe('OpenTelemetry spans leave every part of a call and form one trace', () => {
  let g: Gatehouse;
  let run: Run;
  // Nothing may carry this: it is only ever an argument value.
  const marker = `Otel ${randomUUID()} Row`;

  beforeAll(async () => {
    g = await startGatehouse('oteltrace', { approval: true });
    run = await g.createRun('support-agent');
  });
  afterAll(async () => {
    await g.stop();
  });

  it('exports a read as client → policy → executor → handler spans of one trace, the caller’s', async () => {
    const traceId = randomUUID().replace(/-/g, '');
    const callerSpanId = randomUUID().replace(/-/g, '').slice(0, 16);
    const commandId = `cmd-${randomUUID()}`;
    const result = await g.client.call(
      'preview_address_change.v1',
      { customer_id: 'C-1842', destination: { kind: 'new', line1: marker, city: 'York', country: 'GB' } },
      { runId: run.run_id, tenant: run.tenant, commandId, traceparent: `00-${traceId}-${callerSpanId}-01` },
    );
    expect(result.ok).toBe(true);
    const spans = await spansOf(commandId, 4);
    const call = one(spans, 'call preview_address_change.v1');
    const policy = one(spans, 'policy preview_address_change.v1');
    const execute = one(spans, 'execute preview_address_change.v1');
    const handler = one(spans, 'handler preview_address_change.v1');

    for (const span of [call, policy, execute, handler]) expect(span.traceId, span.name).toBe(traceId);
    expect(call.parentSpanId).toBe(callerSpanId);
    expect(policy.parentSpanId).toBe(call.spanId);
    expect(execute.parentSpanId).toBe(policy.spanId);
    expect(handler.parentSpanId).toBe(execute.spanId);
    expect([call.scope, policy.scope, execute.scope, handler.scope]).toEqual([
      'gatehouse.client',
      'gatehouse.policy',
      'gatehouse.executor',
      'gatehouse.executor',
    ]);
    expect(call.service).toBe('gatehouse-client');
    for (const span of [call, policy, execute, handler]) {
      expect(span.attributes, span.name).toMatchObject({
        'gatehouse.tool': 'preview_address_change.v1',
        'gatehouse.tool.name': 'preview_address_change',
        'gatehouse.tool.version': 1,
        'gatehouse.tenant': run.tenant,
        'gatehouse.run_id': run.run_id,
      });
    }
    expect(call.attributes['gatehouse.status']).toBe('ok');
    expect(execute.attributes['gatehouse.status']).toBe('ok');
    expect(execute.attributes['gatehouse.arguments_sha256']).toMatch(/^[0-9a-f]{64}$/);
    expect(policy.attributes['gatehouse.decision']).toBe('routed');
    expect(handler.attributes['gatehouse.status']).toBe('ok');
    expect(
      receiver.paths.every((p) => p.startsWith('POST /v1/traces application/json')),
      receiver.paths.join('; '),
    ).toBe(true);
  });

  it('marks a refusal with its error code on the client’s and the policy service’s spans', async () => {
    const commandId = `cmd-${randomUUID()}`;
    const result = await g.client.call('get_customer.v1', { customer_id: 'nobody' }, { runId: run.run_id, tenant: run.tenant, commandId });
    expect(!result.ok && result.error.code).toBe('INVALID_ARGUMENT');
    const spans = await spansOf(commandId, 2);
    const call = one(spans, 'call get_customer.v1');
    const policy = one(spans, 'policy get_customer.v1');
    expect(call.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(call.parentSpanId).toBe('');
    expect(policy.traceId).toBe(call.traceId);
    expect(policy.parentSpanId).toBe(call.spanId);
    for (const span of [call, policy]) {
      expect(span.attributes['gatehouse.error_code'], span.name).toBe('INVALID_ARGUMENT');
      expect(span.statusCode, span.name).toBe(2);
    }
    expect(spans.some((s) => s.name.startsWith('execute '))).toBe(false);
  });

  it('exports a write a person approves as client → policy → approval → executor → handler, one trace', async () => {
    const proposalId = await preview(g, run, `${marker} 2`);
    const commandId = `cmd-${randomUUID()}`;
    let notice: PendingNotice | undefined;
    const settled = g.client.call(
      'commit_address_change.v2',
      { proposal_id: proposalId },
      {
        runId: run.run_id,
        tenant: run.tenant,
        timeoutMs: 60_000,
        commandId,
        onPending: (p) => (notice = p),
      },
    );
    await eventually(() => notice, 20_000, 'pending_approval');
    expect((await decideAs(g.approval?.url ?? '', proposalId, 'approve', TOKENS.lead, { waitForRequest: true })).status).toBe(200);
    expect((await settled).ok).toBe(true);

    const spans = await spansOf(commandId, 5);
    const call = one(spans, 'call commit_address_change.v2');
    const policy = one(spans, 'policy commit_address_change.v2');
    const approval = one(spans, 'approval request commit_address_change.v2');
    const execute = one(spans, 'execute commit_address_change.v2');
    const handler = one(spans, 'handler commit_address_change.v2');

    for (const span of [policy, approval, execute, handler]) expect(span.traceId, span.name).toBe(call.traceId);
    expect(policy.parentSpanId).toBe(call.spanId);
    expect(approval.parentSpanId).toBe(policy.spanId);
    expect(execute.parentSpanId).toBe(approval.spanId);
    expect(handler.parentSpanId).toBe(execute.spanId);
    expect(approval.scope).toBe('gatehouse.approval');
    expect(policy.attributes['gatehouse.decision']).toBe('approval_requested');
    expect(approval.attributes['gatehouse.proposal_id']).toBe(proposalId);
    for (const span of [call, policy, approval, execute, handler]) {
      expect(span.attributes, span.name).toMatchObject({
        'gatehouse.tool.name': 'commit_address_change',
        'gatehouse.tool.version': 2,
        'gatehouse.tenant': run.tenant,
        'gatehouse.run_id': run.run_id,
      });
    }
    expect(call.attributes['gatehouse.status']).toBe('ok');
    expect(execute.attributes['gatehouse.status']).toBe('ok');
    expect(handler.attributes['gatehouse.status']).toBe('ok');
  });

  it('never exports an argument value', () => {
    // Every payload received so far, the read and the write with the marker in their arguments included.
    expect(receiver.bodies.length).toBeGreaterThan(0);
    expect(receiver.spans.length).toBeGreaterThanOrEqual(10);
    for (const body of receiver.bodies) {
      expect(body).not.toContain(marker);
      expect(body).not.toContain('Otel ');
    }
  });
});

describe('a service process exports its spans when only the endpoint is set, and flushes them when it stops', () => {
  let g: Gatehouse;
  let fleet: ExecutorFleet;

  beforeAll(async () => {
    g = await startGatehouse('otelproc', { executors: 0 });
    fleet = new ExecutorFleet(g, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, 3);
    await fleet.prepare();
    fleet.spawn('otel-executor');
    await fleet.awaitMembers(1);
  });
  afterAll(async () => {
    await fleet.stop();
    await g.stop();
  });

  it('gives the executor process’s span its service name and the in-process policy span as parent', async () => {
    const run = await g.createRun('support-agent');
    const commandId = `cmd-${randomUUID()}`;
    const result = await g.client.call('get_customer.v1', { customer_id: 'C-1842' }, { runId: run.run_id, tenant: run.tenant, commandId });
    expect(result.ok).toBe(true);
    // Stopped at once: its spans wait in the batch (5 s by default there) and go out as it stops.
    const exit = await fleet.processes[0]?.stop('SIGTERM', 15_000);
    expect(exit).toEqual({ code: 0, signal: null });
    const spans = receiver.spans.filter((s) => s.attributes['gatehouse.command_id'] === commandId);
    const execute = one(spans, 'execute get_customer.v1');
    const handler = one(spans, 'handler get_customer.v1');
    expect([execute.service, handler.service]).toEqual(['gatehouse-executor', 'gatehouse-executor']);
    expect(handler.parentSpanId).toBe(execute.spanId);
    const policy = one(await spansOf(commandId, 4), 'policy get_customer.v1');
    expect(execute.parentSpanId).toBe(policy.spanId);
    expect(execute.traceId).toBe(policy.traceId);
  });
});
