// Surface: MCP tasks at the front door (docs/threat-model.md, "MCP front door: tasks").
// The attacker: nobody in particular — an instance of the front door that dies, is deployed over or
// shuts down while a task waits, and an agent that keeps polling the task on another instance. The
// promise: a task is bound to one command_id for its whole life; an instance that takes it over
// waits for that command and never calls the tool again, so a write runs at most once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { RunningMcpService } from '@gatehouse/mcp';
import type { ExecutionOrder } from '@gatehouse/events';
import { startGatehouse } from '../support/gatehouse.js';
import type { Gatehouse } from '../support/gatehouse.js';
import { approveAsLead, connectHttp, createRunWithToken, dataOf, startFrontDoor } from '../support/mcp.js';
import { envelope, rawRequest } from '../support/mcp-envelope.js';
import { pollUntil } from '../support/poll.js';

describe('an MCP task whose front-door instance stops while its command waits', () => {
  let g: Gatehouse;
  let other: RunningMcpService;
  let watch: { orders: ExecutionOrder[]; stop(): Promise<void> };
  const ordersOfRun = (runId: string): ExecutionOrder[] => watch.orders.filter((o) => o.run_id === runId);

  beforeAll(async () => {
    // No executor yet: an order stays queued on gatehouse.execute until the test starts one.
    g = await startGatehouse('atk-mcp-tasks', { executors: 0, approval: true });
    other = await startFrontDoor(g, { taskLeaseMs: 1_000 });
    watch = await g.watchOrders();
  });
  afterAll(async () => {
    await watch?.stop();
    await other?.stop();
    await g?.stop();
  });

  it('is taken over by another instance that waits for the same command: one order, one export, the task ends with its answer (2025-11-25)', async () => {
    const run = await createRunWithToken(g, 'ops-admin');
    const doomed = await startFrontDoor(g, { taskLeaseMs: 1_000 });
    const client = await connectHttp(doomed.url, run);
    const stream = client.experimental.tasks.callToolStream(
      { name: 'start_customer_export_v1', arguments: { customer_id: 'C-1842', format: 'csv' } },
      CallToolResultSchema,
      { task: { ttl: 120_000 } },
    );
    const first = await stream.next();
    if (first.done === true || first.value.type !== 'taskCreated')
      throw new Error(`expected taskCreated, got ${JSON.stringify(first.value)}`);
    const taskId = first.value.task.taskId;
    // The export is allowed without a person: its order is queued, and nothing runs it yet.
    const [order] = await pollUntil(
      () => Promise.resolve(ordersOfRun(run.run_id).length > 0 ? ordersOfRun(run.run_id) : undefined),
      20_000,
      'the queued order',
    );
    await stream.return(undefined);
    await client.close();
    // The instance that waited goes away (a deploy, or a crash: its lease goes with it).
    await doomed.stop();

    const elsewhere = await connectHttp(other.url, run);
    // Polled on another instance, the task is taken over; then an executor comes and runs the queue.
    expect((await elsewhere.experimental.tasks.getTask(taskId)).status).toBe('working');
    await g.startExecutor();
    const done = await pollUntil(
      async () => {
        const task = await elsewhere.experimental.tasks.getTask(taskId);
        return task.status === 'working' ? undefined : task;
      },
      30_000,
      'the task taken over and finished',
      100,
    );
    expect(done.status).toBe('completed');
    const result: CallToolResult = await elsewhere.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(dataOf(result)).toMatchObject({ state: 'queued' });
    // The answer is the one command's: the same command_id the first instance sent, and no other order.
    expect(result._meta?.['gatehouse/command_id']).toBe(order?.command_id);
    expect(ordersOfRun(run.run_id).map((o) => o.command_id)).toEqual([order?.command_id]);
    await elsewhere.close();
  });

  it("is taken over on 2026-07-28 as well: the task keeps the command it sent, and ends with that command's answer after approval", async () => {
    if (g.executors.length === 0) await g.startExecutor();
    const run = await createRunWithToken(g, 'support-agent');
    const doomed = await startFrontDoor(g, { taskLeaseMs: 1_000 });
    const preview = await rawRequest(doomed.url, run.mcp_token, {
      method: 'tools/call',
      params: {
        name: 'preview_address_change_v1',
        arguments: { customer_id: 'C-1842', destination: { kind: 'new', line1: '3 Takeover Row', city: 'York', country: 'GB' } },
        _meta: envelope(),
      },
    });
    const proposalId = String((preview.body.result?.['structuredContent'] as Record<string, unknown> | undefined)?.['proposal_id']);
    const started = await rawRequest(doomed.url, run.mcp_token, {
      method: 'tools/call',
      params: { name: 'commit_address_change_v2', arguments: { proposal_id: proposalId }, _meta: envelope() },
    });
    expect(started.body.result?.['resultType']).toBe('task');
    const taskId = String(started.body.result?.['taskId']);
    // What the task waits for is fixed when it is made: one command, by its id.
    const stored = JSON.parse((await g.redis.get(g.keys.mcpTask(run.run_id, taskId))) ?? '{}') as {
      call?: { command?: { commandId?: string } };
    };
    const commandId = stored.call?.command?.commandId;
    expect(commandId).toMatch(/^[0-9a-f-]{36}$/);
    await doomed.stop();
    const get = async (): Promise<Record<string, unknown>> =>
      (await rawRequest(other.url, run.mcp_token, { method: 'tasks/get', params: { taskId, _meta: envelope() } })).body.result ?? {};
    expect((await get())['status']).toBe('working');
    expect(await approveAsLead(g, proposalId)).toBe(200);
    const done = await pollUntil(async () => ((await get())['status'] === 'working' ? undefined : get()), 30_000, 'the task finished', 100);
    expect(done['status']).toBe('completed');
    const result = done['result'] as CallToolResult;
    expect(result._meta?.['gatehouse/command_id']).toBe(commandId);
    expect(
      ordersOfRun(run.run_id)
        .filter((o) => o.tool === 'commit_address_change.v2')
        .map((o) => o.command_id),
    ).toEqual([commandId]);
  });
});
