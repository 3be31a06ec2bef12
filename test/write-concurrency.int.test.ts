import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallResult } from '@gatehouse/client';
import { customerSupportCatalog } from '@gatehouse/example-customer-support';
import type { Run } from '@gatehouse/state';
import { ExecutorFleet, seedCustomers } from './support/fleet.js';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';
import { sandboxAllowsWrites } from './support/test-policy.js';
import { armFaults } from './support/writes.js';

const PARTITIONS = 6;
const TENANTS = Array.from({ length: 10 }, (_, i) => `tenant-${i}`);
const PER_TENANT = 40;
const TENANT_LIMIT = 4;

/** Runs `task` over `items` with at most `width` in flight. */
async function bounded<T, R>(items: readonly T[], width: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const index = next++;
        out[index] = await task(items[index] as T);
      }
    }),
  );
  return out;
}

describe('per-tenant concurrency slots shared by every executor', () => {
  let g: Gatehouse;
  let fleet: ExecutorFleet;
  const runs = new Map<string, Run>();

  beforeAll(async () => {
    const catalog = customerSupportCatalog();
    g = await startGatehouse('wconc', { executors: 0, faults: true, partitions: PARTITIONS, catalog, table: sandboxAllowsWrites(catalog) });
    fleet = new ExecutorFleet(
      g,
      { GATEHOUSE_TENANT_SLOTS: String(TENANT_LIMIT), GATEHOUSE_RUN_SLOTS: '100', EXECUTOR_LEASE_MS: '3000' },
      PARTITIONS,
    );
    await fleet.prepare();
    for (const id of ['exec-a', 'exec-b', 'exec-c']) fleet.spawn(id);
    await fleet.awaitMembers(3);
    for (const tenant of TENANTS) runs.set(tenant, await g.createRun('support-agent', { tenant }));
  }, 120_000);
  afterAll(async () => {
    await fleet.stop();
    await g.stop();
  });

  it('never lets the system of record see more than the tenant limit in flight, across three executor processes, and completes all 400 writes', async () => {
    const customers = await seedCustomers(g, TENANTS, PER_TENANT);
    const proposals = await bounded(customers, 40, async (c) => {
      const run = runs.get(c.tenant) as Run;
      const result = await g.client.call(
        'preview_address_change.v1',
        { customer_id: c.id, destination: { kind: 'new', line1: '2 Limited Lane', city: 'York', country: 'GB' } },
        { runId: run.run_id, tenant: c.tenant, timeoutMs: 60_000 },
      );
      if (!result.ok) throw new Error(`preview of ${c.id}: ${result.error.code}`);
      return { ...c, proposalId: (result.result as { proposal_id: string }).proposal_id };
    });
    await armFaults(g, { writeDelayMs: 150 });
    await fetch(`${g.customers.url}/__stats/reset`, { method: 'POST' });

    const started = Date.now();
    const commits: CallResult[] = await Promise.all(
      proposals.map((p) => {
        const run = runs.get(p.tenant) as Run;
        return g.client.call(
          'commit_address_change.v2',
          { proposal_id: p.proposalId },
          { runId: run.run_id, tenant: p.tenant, timeoutMs: 120_000 },
        );
      }),
    );
    const elapsed = Date.now() - started;
    const failed = commits.filter((c) => !c.ok).map((c) => (c.ok ? '' : c.error.code));
    expect(failed).toEqual([]);

    const stats = (await (await fetch(`${g.customers.url}/__stats`)).json()) as { maxInFlightByTenant: Record<string, number> };
    for (const tenant of TENANTS) expect(stats.maxInFlightByTenant[tenant] ?? 0).toBeLessThanOrEqual(TENANT_LIMIT);
    expect(Math.max(...TENANTS.map((t) => stats.maxInFlightByTenant[t] ?? 0))).toBe(TENANT_LIMIT);
    const { rows } = await g.customers.db.query<{ n: string }>(
      `select count(*) as n from ${g.customers.t.customers} where id = any($1) and version = 2`,
      [customers.map((c) => c.id)],
    );
    expect(Number(rows[0]?.n)).toBe(TENANTS.length * PER_TENANT);
    console.log(
      `concurrency: ${commits.length} slow writes across ${TENANTS.length} tenants in ${elapsed} ms; max in flight per tenant ${JSON.stringify(stats.maxInFlightByTenant)}`,
    );
  }, 180_000);
});
