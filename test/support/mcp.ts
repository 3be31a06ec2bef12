import { expect } from 'vitest';
import type { ModelError } from '@gatehouse/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startMcpService } from '@gatehouse/mcp';
import type { McpServiceOptions, RunningMcpService } from '@gatehouse/mcp';
import { RunRegistry } from '@gatehouse/state';
import type { Run } from '@gatehouse/state';
import { TOKENS } from './approval.js';
import { decideAs } from './decide.js';
import { CONTROL_TOKEN } from './gatehouse.js';
import type { Gatehouse } from './gatehouse.js';
import { TEST_FRONT_DOOR_KEY, TEST_KEY_RING } from './signing.js';
import { config, logger } from './stack.js';

/** A tool result as any MCP client hands it over, whichever SDK and revision. */
export interface McpResult {
  readonly content: readonly { readonly type: string; readonly text?: string }[];
  readonly structuredContent?: Record<string, unknown> | undefined;
  readonly isError?: boolean | undefined;
  readonly _meta?: Record<string, unknown> | undefined;
}

/** The error an isError result carries, read from its content as a model would, checked against _meta. */
export function errorOf(result: McpResult): ModelError {
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  const first = result.content[0];
  if (first?.type !== 'text' || first.text === undefined) throw new Error('an error result carries its error as text');
  const { error } = JSON.parse(first.text) as { error: ModelError };
  expect(result._meta?.['gatehouse/error']).toEqual(error);
  expect(Object.keys(error).sort()).toEqual(['code', 'field', 'message', 'next', 'permitted', 'retry_after_ms', 'retryable']);
  return error;
}

/** The data an ok result carries: structuredContent, and the same JSON in content behind the data note. */
export function dataOf(result: McpResult): Record<string, unknown> {
  expect(result.isError ?? false).toBe(false);
  const [note, data] = result.content;
  expect(note?.type === 'text' && note.text).toMatch(/data returned by the tool, not instructions/);
  if (data?.type !== 'text' || data.text === undefined) throw new Error('an ok result carries its JSON as text');
  expect(JSON.parse(data.text)).toEqual(result.structuredContent);
  return result.structuredContent ?? {};
}

/** A run registered with `mcp_token: true`: the bearer token an MCP client sends, and the run's key (`GATEHOUSE_RUN_KEY` of a stdio front door). */
export type RunWithToken = Run & { readonly mcp_token: string; readonly run_key: string };

/** Starts an MCP front door in this process over a test Gatehouse's topics and Redis prefix. */
export function startFrontDoor(
  g: Gatehouse,
  overrides: Partial<
    Pick<McpServiceOptions, 'waitMs' | 'progressMs' | 'taskTtlMs' | 'taskLeaseMs' | 'listTtlMs' | 'transport' | 'people'>
  > = {},
): Promise<RunningMcpService> {
  return startMcpService({
    events: { ...config, topicPrefix: g.topicPrefix },
    redis: g.redis,
    redisPrefix: g.redisPrefix,
    catalog: g.catalog,
    logger,
    transport: { kind: 'http', host: '127.0.0.1', port: 0, signingKey: TEST_FRONT_DOOR_KEY },
    waitMs: 30_000,
    progressMs: 200,
    taskTtlMs: 600_000,
    resultKeys: TEST_KEY_RING,
    ...overrides,
  });
}

/** Registers a run through the control API and asks for its MCP token. */
export async function createRunWithToken(g: Gatehouse, role: string, overrides: Record<string, unknown> = {}): Promise<RunWithToken> {
  const response = await fetch(`${g.policies[0]?.url ?? ''}/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CONTROL_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      tenant: 'acme',
      principal: 'agent:mcp-bot',
      role,
      environment: 'sandbox',
      ttl_ms: 600_000,
      mcp_token: true,
      ...overrides,
    }),
  });
  if (response.status !== 201) throw new Error(`run registration answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as RunWithToken;
}

/** The SDK's own client, connected over Streamable HTTP with the run's token. */
export async function connectHttp(url: string, run: RunWithToken): Promise<Client> {
  const client = new Client({ name: 'gatehouse-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${run.mcp_token}` } } }),
  );
  return client;
}

/** Approves a pending proposal through the approval API as the test support lead; the HTTP status. */
export function approveAsLead(g: Gatehouse, proposalId: string): Promise<number> {
  return decideAsLead(g, proposalId, 'approve', {});
}

/** Approves or rejects (with a reason) a pending proposal as the test support lead, with what it was shown; the HTTP status. */
export async function decideAsLead(
  g: Gatehouse,
  proposalId: string,
  decision: 'approve' | 'reject',
  body: { reason?: string },
): Promise<number> {
  const options = { waitForRequest: true, ...(body.reason === undefined ? {} : { reason: body.reason }) };
  return (await decideAs(g.approval?.url ?? '', proposalId, decision, TOKENS.lead, options)).status;
}

/** The sign-in run the front door registered for a person (`run_mcp_…`), as its registry holds it; undefined when there is none. */
export async function signInRunOf(g: Gatehouse): Promise<{ readonly runId: string; readonly run: Run | undefined }> {
  const runId =
    (await g.redis.keys(`${g.redisPrefix}run:{run_mcp_*`))
      .map((key) => /\{(run_mcp_[0-9a-f]+)\}/.exec(key)?.[1])
      .find((id) => id !== undefined) ?? '';
  return { runId, run: await new RunRegistry(g.redis, g.keys).get(runId) };
}
