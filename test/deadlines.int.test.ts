import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventPublisher } from '@gatehouse/events';
import type { ToolCommand } from '@gatehouse/events';
import { customerSupportCatalog } from '@gatehouse/example-customer-support';
import { readCommitted } from './support/committed-records.js';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse, RegisteredRun } from './support/gatehouse.js';
import { proofFor } from './support/signing.js';
import { eventually } from './support/stack.js';
import { sandboxAllowsWrites } from './support/test-policy.js';
import { collect, currentVersion, preview } from './support/writes.js';

// The command's deadline_at means what the schema says: no work starts after it, and no later stage
// extends it.
describe("a call's deadline holds at every stage", () => {
  let g: Gatehouse;
  let run: RegisteredRun;
  let results: Awaited<ReturnType<typeof collect<'results'>>>;
  let orders: Awaited<ReturnType<typeof collect<'execute'>>>;

  beforeAll(async () => {
    const catalog = customerSupportCatalog();
    g = await startGatehouse('deadline', { catalog, table: sandboxAllowsWrites(catalog) });
    run = await g.createRun('support-agent');
    results = await collect(g, 'results');
    orders = await collect(g, 'execute');
  });
  afterAll(async () => {
    await results?.stop();
    await orders?.stop();
    await g?.stop();
  });

  function command(tool: string, args: unknown, deadlineAt: number): ToolCommand {
    const now = Date.now();
    return {
      schema_version: 1,
      command_id: `cmd-${randomUUID()}`,
      run_id: run.run_id,
      tenant: run.tenant,
      tool,
      arguments: JSON.stringify(args),
      sent_at: now,
      deadline_at: deadlineAt,
    };
  }

  async function send(...commands: ToolCommand[]): Promise<void> {
    const publisher = await EventPublisher.connect(g.kafka, g.serde);
    try {
      for (const c of commands) await publisher.publish('commands', c.tenant, c, proofFor(run, c));
    } finally {
      await publisher.disconnect();
    }
  }

  it('refuses a read and a write whose deadline has passed at the boundary: TIMEOUT, no order, no row changed', async () => {
    const before = await currentVersion(g);
    const proposalId = await preview(g, run, '1 Late Lane');
    const late = Date.now() - 60_000;
    const read = command('get_customer.v1', { customer_id: 'C-1842' }, late);
    const write = command('commit_address_change.v2', { proposal_id: proposalId }, late);
    await send(read, write);
    for (const c of [read, write]) {
      const answer = await eventually(() => results.events.find((r) => r.command_id === c.command_id), 20_000, `the answer to ${c.tool}`);
      expect(answer.error).toMatchObject({ code: 'TIMEOUT', retryable: false });
    }
    // An order would have been published before the answer: once every order on the topic now has
    // been read, none of them is for these calls. (Counted as records, not offsets: orders go out in
    // transactions, and each transaction's marker takes an offset.)
    const published = (await readCommitted(g.kafka.config, g.topics.execute)).length;
    await eventually(() => orders.events.length >= published || undefined, 20_000, `the ${published} orders on the topic`);
    expect(orders.events.filter((o) => o.command_id === read.command_id || o.command_id === write.command_id)).toEqual([]);
    expect(await currentVersion(g)).toBe(before);
  });

  it("keeps the call's deadline on the order of an allowed write", async () => {
    const proposalId = await preview(g, run, '2 Prompt Place');
    const deadline = Date.now() + 30_000;
    const write = command('commit_address_change.v2', { proposal_id: proposalId }, deadline);
    await send(write);
    const order = await eventually(() => orders.events.find((o) => o.command_id === write.command_id), 20_000, 'the order');
    expect(order.deadline_at).toBe(deadline);
    const answer = await eventually(() => results.events.find((r) => r.command_id === write.command_id), 20_000, 'the answer');
    expect(answer.status, JSON.stringify(answer.error)).toBe('ok');
  });
});
