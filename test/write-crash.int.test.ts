import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallResult } from '@gatehouse/client';
import type { OperatorHandoff, ToolResult } from '@gatehouse/events';
import { customerSupportCatalog } from '@gatehouse/example-customer-support';
import type { Run } from '@gatehouse/state';
import { ExecutorFleet, seedCustomers } from './support/fleet.js';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';
import { eventually } from './support/stack.js';
import { sandboxAllowsWrites } from './support/test-policy.js';
import { slotsHeld } from './support/load-audit.js';
import { openEventLedger } from './support/topic-ledger.js';
import type { TopicLedger } from './support/topic-ledger.js';
import { armFaults } from './support/writes.js';

const PARTITIONS = 6;
const TENANTS = Array.from({ length: 10 }, (_, i) => `crash-${i}`);
const PER_TENANT = 100;
const LEASE_MS = 2_000;

describe('kill -9 of an executor in the middle of 1,000 writes', () => {
  let g: Gatehouse;
  let fleet: ExecutorFleet;
  let results: TopicLedger<ToolResult>;
  let handoffs: TopicLedger<OperatorHandoff>;
  const runs = new Map<string, Run>();

  beforeAll(async () => {
    const catalog = customerSupportCatalog();
    g = await startGatehouse('wcrash', {
      executors: 0,
      faults: true,
      partitions: PARTITIONS,
      catalog,
      table: sandboxAllowsWrites(catalog),
    });
    fleet = new ExecutorFleet(
      g,
      { GATEHOUSE_TENANT_SLOTS: '8', GATEHOUSE_RUN_SLOTS: '8', EXECUTOR_LEASE_MS: String(LEASE_MS), EXECUTOR_SESSION_TIMEOUT_MS: '6000' },
      PARTITIONS,
    );
    await fleet.prepare();
    fleet.spawn('exec-a');
    fleet.spawn('exec-b');
    await fleet.awaitMembers(2);
    for (const tenant of TENANTS) runs.set(tenant, await g.createRun('support-agent', { tenant }));
    results = await openEventLedger(g, 'results');
    handoffs = await openEventLedger(g, 'operator');
  }, 120_000);
  afterAll(async () => {
    await results.stop();
    await handoffs.stop();
    await fleet.stop();
    await g.stop();
  });

  it('applies every write at most once, answers every command once (or hands it to an operator), and leaks no slot', async () => {
    const customers = await seedCustomers(g, TENANTS, PER_TENANT);
    const proposals: { tenant: string; id: string; proposalId: string }[] = [];
    for (let i = 0; i < customers.length; i += 100) {
      const batch = await Promise.all(
        customers.slice(i, i + 100).map(async (c) => {
          const run = runs.get(c.tenant) as Run;
          const result = await g.client.call(
            'preview_address_change.v1',
            { customer_id: c.id, destination: { kind: 'new', line1: '9 Survivor Street', city: 'York', country: 'GB' } },
            { runId: run.run_id, tenant: c.tenant, timeoutMs: 60_000 },
          );
          if (!result.ok) throw new Error(`preview of ${c.id}: ${result.error.code}`);
          return { ...c, proposalId: (result.result as { proposal_id: string }).proposal_id };
        }),
      );
      proposals.push(...batch);
    }
    await armFaults(g, { writeDelayMs: 30 });

    let settled = 0;
    const victim = fleet.processes[0];
    const commits = proposals.map((p) => {
      const run = runs.get(p.tenant) as Run;
      return g.client
        .call('commit_address_change.v2', { proposal_id: p.proposalId }, { runId: run.run_id, tenant: p.tenant, timeoutMs: 180_000 })
        .then((r) => {
          settled += 1;
          return r;
        });
    });
    await eventually(() => (settled >= 250 ? true : undefined), 120_000, '250 settled commits');
    await victim?.stop('SIGKILL');
    const killedAt = settled;
    fleet.spawn('exec-a-restarted');
    const answers: CallResult[] = await Promise.all(commits);
    // The client has its answers; the ledgers read the same topics on their own and may trail it.
    const readWhenAnswered = results.records.length;
    await results.caughtUp();
    await handoffs.caughtUp();
    const handoffEvents = handoffs.records.flatMap((r) => (r.value === undefined ? [] : [r.value]));

    const byCode = new Map<string, number>();
    for (const a of answers) {
      const code = a.ok ? 'ok' : a.error.code;
      byCode.set(code, (byCode.get(code) ?? 0) + 1);
    }
    // No call is lost: every one got a terminal answer, never the client's own deadline.
    expect(byCode.get('TIMEOUT') ?? 0).toBe(0);
    expect([...byCode.keys()].filter((c) => c !== 'ok' && c !== 'OUTCOME_UNKNOWN')).toEqual([]);

    const ids = customers.map((c) => c.id);
    const { rows } = await g.customers.db.query<{ version: number; n: string }>(
      `select version, count(*) as n from ${g.customers.t.customers} where id = any($1) group by version`,
      [ids],
    );
    const versions = new Map(rows.map((r) => [Number(r.version), Number(r.n)]));
    // At most once: no customer moved twice.
    expect([...versions.keys()].every((v) => v === 1 || v === 2)).toBe(true);
    const applied = versions.get(2) ?? 0;
    const ok = byCode.get('ok') ?? 0;
    const unknown = byCode.get('OUTCOME_UNKNOWN') ?? 0;
    expect(applied).toBeGreaterThanOrEqual(ok);
    expect(applied).toBeLessThanOrEqual(ok + unknown);

    // Every unknown outcome has its operator handoff.
    const commandIds = new Set(answers.map((a) => a.commandId));
    const unknownIds = answers.filter((a) => !a.ok && a.error.code === 'OUTCOME_UNKNOWN').map((a) => a.commandId);
    for (const id of unknownIds) expect(handoffEvents.some((h) => h.command_id === id)).toBe(true);

    // Exactly one terminal answer per command on the topic (a repeat, if any, must be identical).
    const terminal = results.records.flatMap((r) =>
      r.value !== undefined && commandIds.has(r.value.command_id) && r.value.status !== 'pending_approval' ? [r.value] : [],
    );
    const perCommand = new Map<string, Set<string>>();
    for (const r of terminal) {
      const seen = perCommand.get(r.command_id) ?? new Set<string>();
      seen.add(`${r.status}|${r.result ?? ''}|${r.error?.code ?? ''}`);
      perCommand.set(r.command_id, seen);
    }
    expect(perCommand.size).toBe(commandIds.size);
    expect([...perCommand.values()].every((s) => s.size === 1)).toBe(true);
    const duplicates = terminal.length - perCommand.size;

    // No slot outlives its lease: the dead executor's run out within one lease.
    expect(
      await slotsHeld(
        g,
        TENANTS.map((t) => `tenant:${t}`),
        LEASE_MS * 2,
      ),
    ).toBe(0);

    console.log(
      `crash: commands ${answers.length}, killed after ${killedAt} settled, writes applied ${applied}, applied twice 0, ` +
        `ok ${ok}, unknown→handoffs ${unknown}/${handoffEvents.length}, lost 0, duplicate result events ${duplicates}, ledger behind the client by ${results.records.length - readWhenAnswered} records at the last answer`,
    );
  }, 300_000);
});
