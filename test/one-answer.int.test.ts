import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DLQ_HEADER, dlqTopicOf, EventPublisher } from '@gatehouse/events';
import type { ToolCommand } from '@gatehouse/events';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse, RegisteredRun } from './support/gatehouse.js';
import { recordResults } from './support/results.js';
import type { ResultLog } from './support/results.js';
import { proofFor } from './support/signing.js';
import { pollUntil } from './support/poll.js';
import { readRaw } from './support/stack.js';

// One command_id, one answer. Commands are published straight on the topic, as a runtime whose
// publish failed ambiguously (and sent again) or a redelivery after a crash would leave them.
describe('the boundary answers each command_id once', () => {
  let g: Gatehouse;
  let run: RegisteredRun;
  let results: ResultLog;
  let publisher: EventPublisher;

  beforeAll(async () => {
    g = await startGatehouse('oneanswer', { executors: 1 });
    run = await g.createRun('support-agent');
    results = await recordResults(g);
    publisher = await EventPublisher.connect(g.kafka, g.serde);
  });
  afterAll(async () => {
    await publisher?.disconnect();
    await results?.stop();
    await g?.stop();
  });

  const command = (commandId: string, args: unknown): ToolCommand => {
    const now = Date.now();
    return {
      schema_version: 1,
      command_id: commandId,
      run_id: run.run_id,
      tenant: run.tenant,
      tool: 'get_customer.v1',
      arguments: JSON.stringify(args),
      sent_at: now,
      deadline_at: now + 60_000,
    };
  };

  const duplicates = async (reason: string): Promise<number> => {
    const text = await (await fetch(`${g.policies[0]?.url ?? ''}/metrics`)).text();
    return Number(new RegExp(`^gatehouse_duplicate_commands_total\\{reason="${reason}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  };

  /**
   * A command of the same tenant published after the others, answered after them: the tenant keys
   * the commands topic and the boundary takes a tenant's commands in order, so once this marker is
   * answered, every command before it has been handled.
   */
  const drained = async (): Promise<void> => {
    const marker = command(`marker-${randomUUID()}`, { customer_id: 'C-1842' });
    await publisher.publish('commands', marker.tenant, marker, proofFor(run, marker));
    await results.waitFor([marker.command_id]);
  };

  it('answers a command published twice once, with one order, and counts the copy', async () => {
    const before = await duplicates('repeat');
    const orders = await g.watchOrders();
    const twice = command(`twice-${randomUUID()}`, { customer_id: 'C-1842' });
    await publisher.publishMany('commands', [
      { key: twice.tenant, event: twice, headers: proofFor(run, twice) },
      { key: twice.tenant, event: twice, headers: proofFor(run, twice) },
    ]);
    await results.waitFor([twice.command_id]);
    // The copy waits for the first to be answered, then is counted and dropped: once it is counted,
    // nothing more can come of it.
    await pollUntil(async () => ((await duplicates('repeat')) > before ? true : undefined), 10_000, 'the copy to be counted');
    await drained();
    await orders.stop();

    expect(results.of(twice.command_id).map((r) => r.event.status)).toEqual(['ok']);
    expect(orders.orders.filter((o) => o.command_id === twice.command_id)).toHaveLength(1);
    expect(await duplicates('repeat')).toBe(before + 1);
  });

  it('gives a different payload under a used command_id no answer, and keeps it in the commands DLQ', async () => {
    const before = await duplicates('reused_id');
    const id = `reused-${randomUUID()}`;
    const first = command(id, { customer_id: 'C-1842' });
    const other = command(id, { customer_id: 'C-2001' });
    await publisher.publish('commands', first.tenant, first, proofFor(run, first));
    await results.waitFor([id]);
    await publisher.publish('commands', other.tenant, other, proofFor(run, other));
    await drained();

    const answers = results.of(id);
    expect(answers).toHaveLength(1);
    expect(JSON.parse(answers[0]?.event.result ?? '{}')).toMatchObject({ customer_id: 'C-1842' });
    expect(await duplicates('reused_id')).toBe(before + 1);
    const [dead] = await readRaw(g.kafka, dlqTopicOf(g.topics.commands), 1);
    expect(dead?.headers?.[DLQ_HEADER.reason]?.toString()).toBe('command_id_reused');
    const decoded = await g.serde.decode('commands', dead?.value ?? null);
    expect(decoded.ok && decoded.value.arguments).toBe(other.arguments);
  });

  it('publishes a refusal a stopped policy worker staged once: the results topic shows it published it already', async () => {
    const refused = command(`staged-${randomUUID()}`, { customer_id: 'C-1842' });
    const unknownTool = { ...refused, tool: 'no_such_tool.v1' };
    await publisher.publish('commands', unknownTool.tenant, unknownTool, proofFor(run, unknownTool));
    const answer = (await results.waitFor([unknownTool.command_id])).get(unknownTool.command_id);
    expect(answer?.error?.code).toBe('TOOL_NOT_FOUND');
    // Leave its entry as a worker that published the refusal and died before marking it published
    // leaves it: in flight, lease run out, the refusal staged.
    const tenant = unknownTool.tenant;
    const hash = createHash('sha256')
      .update(`${tenant.length}:${tenant}${run.run_id.length}:${run.run_id}`)
      .update(unknownTool.command_id)
      .digest('hex');
    const entry = g.keys.commandClaim(run.run_id, hash);
    expect(await g.redis.exists(entry)).toBe(1);
    const staged = [{ role: 'results', key: unknownTool.run_id, event: answer, headers: {} }];
    await g.redis.hset(entry, {
      state: 'in_flight',
      owner: 'dead-policy/1',
      lease_until: 0,
      staged: JSON.stringify(staged),
      staged_at: Date.now(),
    });
    // The command comes again (a redelivery after the worker died): the next worker takes the entry over.
    await publisher.publish('commands', unknownTool.tenant, unknownTool, proofFor(run, unknownTool));
    await pollUntil(async () => ((await g.redis.hget(entry, 'state')) !== 'in_flight' ? true : undefined), 30_000, 'the entry settled');
    await drained();
    expect(results.of(unknownTool.command_id).map((r) => r.event)).toEqual([answer]);
  });
});
