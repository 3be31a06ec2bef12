import { describe, expect, it } from 'vitest';
import { GatehouseMetrics, LATENCY_BUCKETS_SECONDS, METRICS, processRegistry } from '@gatehouse/telemetry';

const tools = [
  {
    address: 'get_customer.v1',
    input: { type: 'object', additionalProperties: false, properties: { customer_id: { type: 'string' } } },
  },
  { address: 'commit_address_change.v2', input: { type: 'object', properties: { proposal_id: { type: 'string' } } } },
];

/** The samples of one metric in Prometheus text, as label maps with their values. */
function samples(text: string, name: string): { labels: Record<string, string>; value: number }[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .map((line) => {
      const match = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line);
      const pairs = [...(match?.[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m): [string, string] => [m[1] ?? '', m[2] ?? '']);
      const labels: Record<string, string> = Object.fromEntries(pairs);
      return { labels, value: Number(match?.[2]) };
    });
}

const ALLOWED_LABELS = new Set([
  'stage',
  'tool',
  'version',
  'outcome',
  'code',
  'field',
  'decision',
  'reason',
  'retry_class',
  'tenant',
  'group',
  'topic',
  'partition',
  'status',
  'route',
  'method',
  'kind',
  'surface',
  'call',
]);

describe('the metrics catalogue', () => {
  it('names every metric gatehouse_* exactly once', () => {
    const names = Object.values(METRICS).map((m) => m.name);
    expect(names.every((name) => /^gatehouse_[a-z_]+$/.test(name))).toBe(true);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toHaveLength(23);
  });

  it('registers exactly the catalogue in a service registry', async () => {
    const metrics = new GatehouseMetrics({ tools });
    const registered = (await metrics.registry.getMetricsAsJSON()).map((m) => m.name).sort();
    expect(registered).toEqual(
      Object.values(METRICS)
        .map((m) => m.name)
        .sort(),
    );
  });

  it('uses only bounded labels: never ids, arguments or results', () => {
    const labels = Object.values(METRICS).flatMap((m) => [...m.labelNames]);
    expect(labels.filter((label) => !ALLOWED_LABELS.has(label))).toEqual([]);
    expect(labels.some((label) => /_id$|argument|result/.test(label))).toBe(false);
  });

  it('puts tenant only on the slot gauge', () => {
    const withTenant = Object.values(METRICS)
      .filter((m) => (m.labelNames as readonly string[]).includes('tenant'))
      .map((m) => m.name);
    expect(withTenant).toEqual(['gatehouse_slots_in_use']);
  });
});

describe('GatehouseMetrics', () => {
  it('lets several instances live in one process, each counting on its own', async () => {
    const a = new GatehouseMetrics({ tools });
    const b = new GatehouseMetrics({ tools });
    a.policyDecision('get_customer.v1', 'routed');
    a.policyDecision('get_customer.v1', 'routed');
    b.policyDecision('get_customer.v1', 'routed');
    const count = async (m: GatehouseMetrics) => samples(await m.scrape(), 'gatehouse_calls_total')[0]?.value;
    expect(await count(a)).toBe(2);
    expect(await count(b)).toBe(1);
  });

  it('adds the process metrics, registered once per process, to every scrape', async () => {
    new GatehouseMetrics();
    const text = await new GatehouseMetrics().scrape();
    expect(text.match(/^# TYPE process_cpu_user_seconds_total counter$/gm)).toHaveLength(1);
    expect(text).toContain('nodejs_eventloop_lag_seconds');
    expect(processRegistry()).toBe(processRegistry());
  });

  it('splits a catalog address into tool and version, and labels an unknown address other', async () => {
    const metrics = new GatehouseMetrics({ tools });
    metrics.policyDecision('get_customer.v1', 'routed');
    metrics.policyDecision('made_up_tool.v7', 'refused', { code: 'TOOL_NOT_FOUND' });
    const calls = samples(await metrics.scrape(), 'gatehouse_calls_total').map((s) => s.labels);
    expect(calls).toContainEqual({ stage: 'policy', tool: 'get_customer', version: '1', outcome: 'routed' });
    expect(calls).toContainEqual({ stage: 'policy', tool: 'other', version: 'other', outcome: 'refused' });
    expect(await metrics.scrape()).not.toContain('made_up_tool');
  });

  it('counts a refused argument by code and a field the schema bounds, never the unknown name an agent sent', async () => {
    const metrics = new GatehouseMetrics({ tools });
    metrics.policyDecision('get_customer.v1', 'refused', { code: 'INVALID_ARGUMENT', field: '/customer_id' });
    metrics.policyDecision('get_customer.v1', 'refused', { code: 'INVALID_ARGUMENT', field: '/secret-field-4711' });
    metrics.policyDecision('get_customer.v1', 'refused', { code: 'RUN_NOT_FOUND', field: null });
    const text = await metrics.scrape();
    const fields = samples(text, 'gatehouse_validation_errors_total').map((s) => s.labels['field']);
    expect(fields.sort()).toEqual(['/*', '/customer_id']);
    expect(text).not.toContain('secret-field-4711');
    const codes = samples(text, 'gatehouse_call_errors_total').map((s) => `${s.labels['code']}=${s.value}`);
    expect(codes.sort()).toEqual(['INVALID_ARGUMENT=2', 'RUN_NOT_FOUND=1']);
  });

  it('replaces a code outside the catalogue’s shape with other', async () => {
    const metrics = new GatehouseMetrics({ tools });
    metrics.executed({ tool: 'get_customer.v1', status: 'error', error: { code: 'free text from somewhere' } }, undefined);
    const codes = samples(await metrics.scrape(), 'gatehouse_call_errors_total').map((s) => s.labels['code']);
    expect(codes).toEqual(['other']);
  });

  it('observes end-to-end latency from sent_at in buckets from 1 ms to 30 s, and ignores a send time in the future', async () => {
    expect(LATENCY_BUCKETS_SECONDS[0]).toBe(0.001);
    expect(LATENCY_BUCKETS_SECONDS.at(-1)).toBe(30);
    const metrics = new GatehouseMetrics({ tools });
    const now = Date.now();
    metrics.resultPublished('executor', { tool: 'get_customer.v1', status: 'ok', error: null }, now - 40, now);
    metrics.resultPublished('executor', { tool: 'get_customer.v1', status: 'ok', error: null }, now + 5_000, now);
    const text = await metrics.scrape();
    const count = samples(text, 'gatehouse_end_to_end_latency_seconds_count');
    expect(count).toEqual([{ labels: { stage: 'executor', tool: 'get_customer', version: '1', status: 'ok' }, value: 1 }]);
    const buckets = samples(text, 'gatehouse_end_to_end_latency_seconds_bucket');
    expect(buckets.find((b) => b.labels['le'] === '0.025')?.value).toBe(0);
    expect(buckets.find((b) => b.labels['le'] === '0.05')?.value).toBe(1);
  });

  it('counts an executed result by status and code', async () => {
    const metrics = new GatehouseMetrics({ tools });
    metrics.executed({ tool: 'commit_address_change.v2', status: 'unknown', error: { code: 'OUTCOME_UNKNOWN' } }, undefined);
    metrics.executed({ tool: 'commit_address_change.v2', status: 'ok', error: null }, undefined);
    const calls = samples(await metrics.scrape(), 'gatehouse_calls_total').map((s) => s.labels['outcome']);
    expect(calls.sort()).toEqual(['ok', 'unknown']);
  });

  it('counts only OUTPUT_INVALID and RESULT_TOO_LARGE as output violations', async () => {
    const metrics = new GatehouseMetrics({ tools });
    metrics.outputViolation('get_customer.v1', 'OUTPUT_INVALID');
    metrics.outputViolation('get_customer.v1', 'RESULT_TOO_LARGE');
    metrics.outputViolation('get_customer.v1', 'TIMEOUT');
    const codes = samples(await metrics.scrape(), 'gatehouse_output_violations_total').map((s) => s.labels['code']);
    expect(codes.sort()).toEqual(['OUTPUT_INVALID', 'RESULT_TOO_LARGE']);
  });

  it('keeps closed sets closed: retry classes, unknown-outcome reasons, decisions and HTTP methods', async () => {
    const metrics = new GatehouseMetrics({ tools });
    metrics.retry('get_customer.v1', 'safe');
    metrics.retry('get_customer.v1', 'whenever');
    metrics.unknownOutcome('commit_address_change.v2', 'status_unavailable');
    metrics.approvalDecision('commit_address_change.v2', 'approved');
    metrics.approvalDecision('commit_address_change.v2', 'maybe');
    metrics.httpRequest('/customers/:id', 'BREW', 404, 3);
    const text = await metrics.scrape();
    expect(
      samples(text, 'gatehouse_retries_total')
        .map((s) => s.labels['retry_class'])
        .sort(),
    ).toEqual(['other', 'safe']);
    expect(samples(text, 'gatehouse_unknown_outcomes_total')[0]?.labels['reason']).toBe('status_unavailable');
    expect(
      samples(text, 'gatehouse_approval_decisions_total')
        .map((s) => s.labels['decision'])
        .sort(),
    ).toEqual(['approved', 'other']);
    expect(samples(text, 'gatehouse_http_requests_total')[0]?.labels).toEqual({ route: '/customers/:id', method: 'other', status: '404' });
  });

  it('tracks the slots a tenant holds up and down', async () => {
    const metrics = new GatehouseMetrics({ tools });
    metrics.slotsAcquired('acme');
    metrics.slotsAcquired('acme');
    metrics.slotsReleased('acme');
    expect(samples(await metrics.scrape(), 'gatehouse_slots_in_use')).toEqual([{ labels: { tenant: 'acme' }, value: 1 }]);
  });

  it('does not observe a handler duration when nothing ran', async () => {
    const metrics = new GatehouseMetrics({ tools });
    metrics.handlerDuration('get_customer.v1', null);
    metrics.handlerDuration('get_customer.v1', 120);
    expect(samples(await metrics.scrape(), 'gatehouse_handler_duration_seconds_count')[0]?.value).toBe(1);
  });
});
