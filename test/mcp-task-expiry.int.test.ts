import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import type { TaskEnabledSession } from '@modelcontextprotocol/ext-tasks/client';
import type { RunningMcpService } from '@gatehouse/mcp';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';
import { approveAsLead, createRunWithToken, dataOf, errorOf, startFrontDoor } from './support/mcp.js';
import type { McpResult, RunWithToken } from './support/mcp.js';
import { connectEnvelope, taskSession } from './support/mcp-envelope.js';
import { currentVersion } from './support/writes.js';

describe('a 2026-07-28 task whose approval lapsed before it was used', () => {
  let g: Gatehouse;
  let door: RunningMcpService;
  let run: RunWithToken;
  let client: Client;
  let session: TaskEnabledSession;

  beforeAll(async () => {
    // Approvals here are valid for 1 ms: every one has lapsed by the time the executor checks it.
    g = await startGatehouse('mcp26exp', { approval: { validityMs: 1 } });
    door = await startFrontDoor(g);
    run = await createRunWithToken(g, 'support-agent');
    client = await connectEnvelope(door.url, run);
    ({ session } = await taskSession(door.url, run));
  });
  afterAll(async () => {
    await session?.close().catch(() => undefined);
    await client?.close().catch(() => undefined);
    await door?.stop();
    await g?.stop();
  });

  it("ends with APPROVAL_EXPIRED as the task's result, and changes nothing", async () => {
    const previewed = (await client.callTool({
      name: 'preview_address_change_v1',
      arguments: { customer_id: 'C-1842', destination: { kind: 'new', line1: '26 Lapsed Lane', city: 'York', country: 'GB' } },
    })) as McpResult;
    const proposalId = dataOf(previewed)['proposal_id'] as string;
    const before = await currentVersion(g);
    const execution = await session.callTool('commit_address_change_v2', { proposal_id: proposalId });
    expect(execution.kind).toBe('task');
    expect(await approveAsLead(g, proposalId)).toBe(200);
    const { outcome, lastTask } = await execution.settle();
    expect(outcome.status).toBe('completed');
    if (outcome.status !== 'completed') return;
    expect(errorOf(outcome.result as McpResult)).toMatchObject({ code: 'APPROVAL_EXPIRED', retryable: false });
    expect(lastTask?.statusMessage).toMatch(/^APPROVAL_EXPIRED: /);
    expect(await currentVersion(g)).toBe(before);
  });
});
