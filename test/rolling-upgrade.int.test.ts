import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool, implement } from '@gatehouse/contracts';
import type { ToolImplementation } from '@gatehouse/contracts';
import type { RunningExecutor } from '@gatehouse/executor';
import type { Run } from '@gatehouse/state';
import type { Gatehouse } from './support/gatehouse.js';
import { ECHO_NOTE, startNoteGatehouse } from './support/note-tools.js';

// One tool in two versions. The policy service's pack has both (it was upgraded first); the
// executor's pack still has v1 only — a rolling upgrade half-way.
const spec = {
  ...ECHO_NOTE,
  output: {
    type: 'object',
    additionalProperties: false,
    required: ['note', 'version'],
    properties: { note: { type: 'string' }, version: { type: 'integer' } },
  },
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
    g = await startNoteGatehouse('rolling', newPack);
    executor = await g.startExecutor('rolling-old-executor', oldPack);
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
