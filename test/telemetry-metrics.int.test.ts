import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PendingNotice } from '@gatehouse/client';
import { KafkaAdmin } from '@gatehouse/events';
import { GatehouseMetrics, startConsumerLag } from '@gatehouse/telemetry';
import type { Run } from '@gatehouse/state';
import { TOKENS } from './support/approval.js';
import { decideAs } from './support/decide.js';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';
import { eventually, logger } from './support/stack.js';
import { preview } from './support/writes.js';

/** One sample of Prometheus text: its metric name, labels and value. */
interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

function parse(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line.length > 0 && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (match?.[1] === undefined || match[3] === undefined) throw new Error(`not a Prometheus sample: ${line}`);
      const pairs = [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m): [string, string] => [m[1] ?? '', m[2] ?? '']);
      return { name: match[1], labels: Object.fromEntries(pairs), value: Number(match[3]) };
    });
}

/** The value of the one sample of `name` whose labels include `labels`; undefined when there is none. */
function valueOf(samples: readonly Sample[], name: string, labels: Readonly<Record<string, string>>): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

async function scrape(baseUrl: string | undefined): Promise<{ text: string; samples: Sample[] }> {
  if (baseUrl === undefined) throw new Error('service has no URL');
  const response = await fetch(`${baseUrl}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
  const text = await response.text();
  return { text, samples: parse(text) };
}

/** Polls a scrape until `check` yields a value; counters move after the result is published. */
async function scrapeUntil<T>(url: string | undefined, check: (samples: readonly Sample[]) => T | undefined, what: string): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = check((await scrape(url)).samples);
    if (value !== undefined) return value;
    if (Date.now() - started > 20_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('every service serves /metrics whose counters move with bounded labels', () => {
  let g: Gatehouse;
  let run: Run;
  const seed = `seedval${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const seedKey = `seedkey${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const urls = (): Record<string, string | undefined> => ({
    policy: g.policies[0]?.url,
    executor: g.executors[0]?.url,
    approval: g.approval?.url,
    customers: g.customers.url,
  });

  beforeAll(async () => {
    g = await startGatehouse('telemetry', { approval: true });
    run = await g.createRun('support-agent');
  });
  afterAll(async () => {
    await g.stop();
  });

  const call = (tool: string, args: unknown) => g.client.call(tool, args, { runId: run.run_id, tenant: run.tenant });

  it('counts an ok read as routed at the policy service and ok at the executor, by tool and version', async () => {
    const result = await call('get_customer.v1', { customer_id: 'C-1842' });
    expect(result.ok).toBe(true);
    const read = { tool: 'get_customer', version: '1' };
    const routed = await scrapeUntil(
      urls()['policy'],
      (s) => valueOf(s, 'gatehouse_calls_total', { stage: 'policy', ...read, outcome: 'routed' }),
      'routed',
    );
    expect(routed).toBe(1);
    const executor = await scrapeUntil(
      urls()['executor'],
      (s) => (valueOf(s, 'gatehouse_calls_total', { stage: 'executor', ...read, outcome: 'ok' }) === undefined ? undefined : s),
      'executed',
    );
    expect(valueOf(executor, 'gatehouse_calls_total', { stage: 'executor', ...read, outcome: 'ok' })).toBe(1);
    expect(valueOf(executor, 'gatehouse_handler_duration_seconds_count', read)).toBe(1);
    // The client's send time travelled in the order's headers: the latency was observed where the result went out.
    expect(valueOf(executor, 'gatehouse_end_to_end_latency_seconds_count', { stage: 'executor', ...read, status: 'ok' })).toBe(1);
    expect(valueOf(executor, 'gatehouse_end_to_end_latency_seconds_bucket', { stage: 'executor', ...read, status: 'ok', le: '30' })).toBe(
      1,
    );
    // The customers service counts the request by its route pattern, not its URL.
    const customers = await scrape(urls()['customers']);
    expect(customers.samples.some((s) => s.name === 'gatehouse_http_requests_total' && s.labels['route'] === '/customers/:id')).toBe(true);
    expect(customers.text).not.toContain('C-1842');
  });

  it('counts refusals by code and a schema-bounded field, and no label carries an argument the agent sent', async () => {
    const unknownField = await call('get_customer.v1', { customer_id: 'C-1842', [seedKey]: seed });
    expect(!unknownField.ok && unknownField.error).toMatchObject({ code: 'INVALID_ARGUMENT', field: `/${seedKey}` });
    const badValue = await call('get_customer.v1', { customer_id: seed });
    expect(!badValue.ok && badValue.error).toMatchObject({ code: 'INVALID_ARGUMENT', field: '/customer_id' });
    const madeUp = await call(`${seedKey}.v1`, { customer_id: seed });
    expect(!madeUp.ok && madeUp.error.code).toBe('TOOL_NOT_FOUND');

    const read = { tool: 'get_customer', version: '1' };
    const policy = await scrapeUntil(
      urls()['policy'],
      (s) =>
        valueOf(s, 'gatehouse_call_errors_total', { stage: 'policy', tool: 'other', version: 'other', code: 'TOOL_NOT_FOUND' }) ===
        undefined
          ? undefined
          : s,
      'the refusals counted',
    );
    expect(valueOf(policy, 'gatehouse_calls_total', { stage: 'policy', ...read, outcome: 'refused' })).toBe(2);
    expect(valueOf(policy, 'gatehouse_call_errors_total', { stage: 'policy', ...read, code: 'INVALID_ARGUMENT' })).toBe(2);
    expect(valueOf(policy, 'gatehouse_validation_errors_total', { ...read, code: 'INVALID_ARGUMENT', field: '/*' })).toBe(1);
    expect(valueOf(policy, 'gatehouse_validation_errors_total', { ...read, code: 'INVALID_ARGUMENT', field: '/customer_id' })).toBe(1);
    expect(valueOf(policy, 'gatehouse_end_to_end_latency_seconds_count', { stage: 'policy', ...read, status: 'error' })).toBe(2);

    for (const [service, url] of Object.entries(urls())) {
      const { text, samples } = await scrape(url);
      const values = samples.flatMap((s) => Object.values(s.labels));
      expect(
        values.filter((v) => v.includes(seed) || v.includes(seedKey)),
        service,
      ).toEqual([]);
      expect(text.includes(seed) || text.includes(seedKey), service).toBe(false);
      expect(text.includes(run.run_id), service).toBe(false);
    }
  });

  it('counts an approval request, the person’s decision and the approved write, with slots back at zero', async () => {
    const proposalId = await preview(g, run, '1 Telemetry Terrace');
    let notice: PendingNotice | undefined;
    const settled = g.client.call(
      'commit_address_change.v2',
      { proposal_id: proposalId },
      {
        runId: run.run_id,
        tenant: run.tenant,
        timeoutMs: 60_000,
        onPending: (p) => (notice = p),
      },
    );
    await eventually(() => notice, 20_000, 'pending_approval');
    expect((await decideAs(g.approval?.url ?? '', proposalId, 'approve', TOKENS.lead, { waitForRequest: true })).status).toBe(200);
    const result = await settled;
    expect(result.ok).toBe(true);

    const commit = { tool: 'commit_address_change', version: '2' };
    const policy = await scrape(urls()['policy']);
    expect(valueOf(policy.samples, 'gatehouse_calls_total', { stage: 'policy', ...commit, outcome: 'approval_requested' })).toBe(1);
    const approval = await scrape(urls()['approval']);
    expect(valueOf(approval.samples, 'gatehouse_approval_decisions_total', { ...commit, decision: 'approved' })).toBe(1);
    expect(valueOf(approval.samples, 'gatehouse_approval_decisions_total', { ...commit, decision: 'rejected' })).toBeUndefined();
    const executor = await scrapeUntil(
      urls()['executor'],
      (s) => (valueOf(s, 'gatehouse_calls_total', { stage: 'executor', ...commit, outcome: 'ok' }) === undefined ? undefined : s),
      'the write counted',
    );
    expect(valueOf(executor, 'gatehouse_calls_total', { stage: 'executor', ...commit, outcome: 'ok' })).toBe(1);
    expect(valueOf(executor, 'gatehouse_slots_in_use', { tenant: 'acme' })).toBe(0);
    expect(valueOf(executor, 'gatehouse_handler_duration_seconds_count', commit)).toBe(1);
    // Through a person's approval, the latency still runs from the commit's sent_at.
    expect(valueOf(executor, 'gatehouse_end_to_end_latency_seconds_count', { stage: 'executor', ...commit, status: 'ok' })).toBe(1);
    expect(approval.text).not.toContain(proposalId);
    expect(executor.some((s) => Object.values(s.labels).some((v) => v.includes(proposalId) || v.includes('Telemetry Terrace')))).toBe(
      false,
    );
  });

  it('reports each consuming service’s lag per topic and partition, and an idle group’s lag as every record it has not read', async () => {
    for (const [service, topic] of [
      ['policy', g.topics.commands],
      ['executor', g.topics.execute],
      ['approval', g.topics.approvalsRequested],
    ] as const) {
      const lags = (await scrape(urls()[service])).samples.filter(
        (s) => s.name === 'gatehouse_consumer_lag' && s.labels['topic'] === topic,
      );
      expect(lags.map((s) => s.labels['partition']).sort(), service).toEqual(['0', '1', '2']);
    }
    const admin = await KafkaAdmin.connect(g.kafka);
    try {
      const high = (await admin.topicOffsets(g.topics.commands)).reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
      expect(high).toBeGreaterThanOrEqual(6);
      const lagOf = async (groupId: string): Promise<number> => {
        const metrics = new GatehouseMetrics();
        const lag = startConsumerLag({ admin, groupId, topics: [g.topics.commands], metrics, logger, intervalMs: 60_000 });
        await lag.measure();
        lag.stop();
        return parse(await metrics.scrape())
          .filter((s) => s.name === 'gatehouse_consumer_lag')
          .reduce((sum, s) => sum + s.value, 0);
      };
      expect(await lagOf(`telemetry-idle-${randomUUID()}`)).toBe(high);
      // The policy service has handled every command and commits within 200 ms of finishing one.
      const started = Date.now();
      while ((await lagOf('telemetry-policy')) !== 0) {
        if (Date.now() - started > 20_000) throw new Error('the policy group never caught up');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await admin.close();
    }
  });

  it('answers /healthz and /readyz with 200 on every service while all dependencies are up', async () => {
    for (const [service, url] of Object.entries(urls())) {
      expect((await fetch(`${url ?? ''}/healthz`)).status, service).toBe(200);
      expect((await fetch(`${url ?? ''}/readyz`)).status, service).toBe(200);
    }
    const readiness = async (service: string): Promise<unknown> => (await fetch(`${urls()[service] ?? ''}/readyz`)).json();
    expect(await readiness('policy')).toEqual({ ready: true, checks: { kafka: 'ok', registry: 'ok', redis: 'ok' } });
    expect(await readiness('executor')).toEqual({ ready: true, checks: { kafka: 'ok', registry: 'ok', redis: 'ok' } });
    expect(await readiness('approval')).toEqual({ ready: true, checks: { postgres: 'ok', kafka: 'ok', registry: 'ok', redis: 'ok' } });
  });
});
