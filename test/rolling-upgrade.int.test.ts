import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog, defineTool, implement } from '@gatehouse/contracts';
import type { ToolImplementation } from '@gatehouse/contracts';
import { startExecutor } from '@gatehouse/executor';
import type { RunningExecutor } from '@gatehouse/executor';
import { parseRoles, PolicyTable } from '@gatehouse/governance';
import type { Run } from '@gatehouse/state';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';
import { config, logger } from './support/stack.js';
import { TEST_ASSERTION_SETTINGS, TEST_ORDER_KEYS, TEST_SIGNING_KEYS } from './support/signing.js';

// One tool in two versions. The policy service's pack has both (it was upgraded first); the
// executor's pack still has v1 only — a rolling upgrade half-way.
const spec = {
  name: 'echo_note',
  description: 'Test-only read: returns the note it is given.',
  input: { type: 'object', additionalProperties: false, required: ['note'], properties: { note: { type: 'string', maxLength: 50 } } },
  output: {
    type: 'object',
    additionalProperties: false,
    required: ['note', 'version'],
    properties: { note: { type: 'string' }, version: { type: 'integer' } },
  },
  effect: 'read',
  retry: 'safe',
  timeoutMs: 2_000,
  cancel: 'none',
  maxResultBytes: 1_024,
} as const;
const v1 = defineTool({ ...spec, version: 1 });
const v2 = defineTool({ ...spec, version: 2 });
const echo = (version: number) => (args: { readonly note: string }) => Promise.resolve({ note: args.note, version });
const newPack: ToolImplementation[] = [implement(v1, { run: echo(1) }), implement(v2, { run: echo(2) })];
const oldPack: ToolImplementation[] = [implement(v1, { run: echo(1) })];

describe('a rolling upgrade in which the policy service hosts a tool version the executor does not', () => {
  let g: Gatehouse;
  let executor: RunningExecutor;
  let run: Run;

  beforeAll(async () => {
    const upgraded = Catalog.load(newPack.map((t) => t.contract));
    const roles = parseRoles(
      { roles: { 'note-reader': { description: 'Reads notes.', readOnly: true, tools: ['echo_note.v1', 'echo_note.v2'] } } },
      upgraded,
    );
    const table = PolicyTable.parse(
      {
        rules: [
          { id: 'no-writes', description: 'Test only.', match: { effect: 'write' }, decision: { kind: 'deny', reason: 'none here' } },
        ],
      },
      upgraded.tools(),
    );
    g = await startGatehouse('rolling', { executors: 0, catalog: upgraded, implementations: newPack, roles, table });
    const stale = Catalog.load(oldPack.map((t) => t.contract));
    executor = await startExecutor({
      events: { ...config, topicSettings: { ...config.topicSettings, partitions: 3 } },
      topics: g.topics,
      redis: g.redis,
      redisPrefix: g.redisPrefix,
      catalog: stale,
      implementations: oldPack,
      trustedKeys: TEST_ORDER_KEYS,
      signingKey: TEST_SIGNING_KEYS.executor,
      assertions: TEST_ASSERTION_SETTINGS,
      logger,
      executorId: 'rolling-old-executor',
      groupId: 'rolling-executor',
      concurrency: 8,
      perTenantConcurrency: 8,
      leaseMs: 3_000,
      proposalTtlMs: 600_000,
    });
    run = await g.createRun('note-reader');
  });
  afterAll(async () => {
    await executor.stop();
    await g.stop();
  });

  it('refuses an order for the version the executor lacks with TOOL_VERSION_UNAVAILABLE, naming what it hosts, and runs no other version', async () => {
    const result = await g.client.call('echo_note.v2', { note: 'hello' }, { runId: run.run_id, tenant: run.tenant });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ code: 'TOOL_VERSION_UNAVAILABLE', retryable: true, next: 'echo_note.v1' });
  });

  it('runs the version both packs have', async () => {
    const result = await g.client.call('echo_note.v1', { note: 'hello' }, { runId: run.run_id, tenant: run.tenant });
    expect(result.ok && result.result).toEqual({ note: 'hello', version: 1 });
  });
});
