import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProposalStore } from '@gatehouse/state';
import type { Run } from '@gatehouse/state';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';

describe('the read path end to end: client → policy → executor → customers → result', () => {
  let g: Gatehouse;
  let run: Run;

  beforeAll(async () => {
    g = await startGatehouse('readpath');
    run = await g.createRun('support-agent');
  });
  afterAll(async () => {
    await g.stop();
  });

  const call = (tool: string, args: unknown) => g.client.call(tool, args, { runId: run.run_id, tenant: run.tenant });

  it('reads a customer as the declared view only, with the evidence of its version', async () => {
    const result = await call('get_customer.v1', { customer_id: 'C-1842' });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.content).toBe('untrusted_data');
    expect(result.operationId).toMatch(/^op_/);
    expect(result.result).toMatchObject({ customer_id: 'C-1842', version: 17, name: 'Marta Kowalska' });
    expect(Object.keys(result.result as object).sort()).toEqual(
      ['customer_id', 'email', 'name', 'saved_addresses', 'shipping_address', 'updated_at', 'version'].sort(),
    );
    expect(JSON.stringify(result.result)).not.toMatch(/credit_score|internal_notes/);
  });

  it('walks every page of open orders with the cursor, never more than page_size at once', async () => {
    const { rows } = await g.customers.db.query<{ n: string }>(
      `select count(*) as n from ${g.customers.t.orders} where customer_id = 'C-1842' and state = 'open'`,
    );
    const expected = Number(rows[0]?.n);
    expect(expected).toBeGreaterThan(7);
    const seen = new Set<string>();
    let cursor: string | null | undefined;
    let pages = 0;
    do {
      const result = await call('list_open_orders_for_customer.v1', {
        customer_id: 'C-1842',
        page_size: 7,
        ...(cursor === undefined || cursor === null ? {} : { cursor }),
      });
      if (!result.ok) throw new Error(`page failed: ${result.error.code}`);
      const page = result.result as { orders: { order_id: string; state: string }[]; cursor: string | null };
      expect(page.orders.length).toBeLessThanOrEqual(7);
      for (const order of page.orders) {
        expect(order.state).toBe('open');
        expect(seen.has(order.order_id)).toBe(false);
        seen.add(order.order_id);
      }
      cursor = page.cursor;
      pages += 1;
    } while (cursor !== null && pages < 50);
    expect(seen.size).toBe(expected);
    expect(pages).toBe(Math.ceil(expected / 7));
  });

  it('previews an address change without changing anything and stores the canonical proposal', async () => {
    const result = await call('preview_address_change.v1', {
      destination: { kind: 'new', line1: '2 New Street', city: 'York', country: 'GB' },
      customer_id: 'C-1842',
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const preview = result.result as { proposal_id: string; current_version: number; effect: string };
    expect(preview.current_version).toBe(17);
    expect(preview.effect).toContain('2 New Street');
    const stored = await new ProposalStore(g.redis, g.keys).get(preview.proposal_id);
    expect(stored?.state).toBe('open');
    expect(stored?.proposal).toMatchObject({
      tool: 'commit_address_change.v2',
      run_id: run.run_id,
      tenant: 'acme',
      target: { type: 'customer', id: 'C-1842', version: 17 },
      arguments:
        '{"customer_id":"C-1842","destination":{"city":"York","country":"GB","kind":"new","line1":"2 New Street"},"expected_version":17}',
    });
    expect(stored?.proposal.arguments_sha256).toMatch(/^[0-9a-f]{64}$/);
    const { rows } = await g.customers.db.query<{ version: number }>(`select version from ${g.customers.t.customers} where id = 'C-1842'`);
    expect(rows[0]?.version).toBe(17);
  });

  it('answers a missing record with NOT_FOUND, not retryable', async () => {
    const result = await call('get_customer.v1', { customer_id: 'C-999999' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ code: 'NOT_FOUND', retryable: false });
  });

  it('serves the run’s tools to its runtime as MCP and OpenAI definitions', async () => {
    const mcp = (await g.client.tools(run.run_id, 'mcp')) as { name: string; annotations: { readOnlyHint: boolean } }[];
    expect(mcp.map((t) => t.name).sort()).toEqual(run.capabilities.map((a) => a.replace('.v', '_v')).sort());
    expect(mcp.find((t) => t.name === 'get_customer_v1')?.annotations.readOnlyHint).toBe(true);
    expect(mcp.find((t) => t.name === 'commit_address_change_v2')?.annotations.readOnlyHint).toBe(false);
    const openai = (await g.client.tools(run.run_id, 'openai')) as { type: string; function: { strict: boolean } }[];
    expect(openai).toHaveLength(run.capabilities.length);
    expect(openai.every((t) => t.type === 'function' && t.function.strict)).toBe(true);
  });
});
