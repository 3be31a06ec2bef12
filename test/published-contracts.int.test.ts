import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog, contractSha256, defineTool, implement } from '@gatehouse/contracts';
import { contractSubject } from '@gatehouse/events';
import type { Run } from '@gatehouse/state';
import type { Gatehouse } from './support/gatehouse.js';
import { ECHO_NOTE, ECHO_NOTE_V1, startNoteGatehouse } from './support/note-tools.js';
import { config } from './support/stack.js';

// A published tool version cannot change: the first service to serve it publishes its contract in
// the schema registry, and a service that holds another contract under that version does not start.
const spec = ECHO_NOTE_V1;
const published = defineTool(spec);
// The same version with an edited input schema: longer notes, and a new optional field.
const edited = defineTool({
  ...spec,
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['note'],
    properties: { note: { type: 'string', maxLength: 500 }, forward_to: { type: 'string' } },
  },
});

async function publishedDocument(g: Gatehouse): Promise<{ version: number; schema: Record<string, unknown> }> {
  const response = await fetch(
    `${config.registryUrl}/subjects/${encodeURIComponent(contractSubject(g.topics, published.address))}/versions/1`,
  );
  expect(response.status).toBe(200);
  const body = (await response.json()) as { version: number; schema: string };
  return { version: body.version, schema: JSON.parse(body.schema) as Record<string, unknown> };
}

describe('a tool version served by two policy services', () => {
  let g: Gatehouse;
  let run: Run;

  beforeAll(async () => {
    g = await startNoteGatehouse('pinned', [implement(published, { run: (args) => Promise.resolve({ note: args.note }) })]);
    await g.startExecutor();
    run = await g.createRun('note-reader');
  });
  afterAll(async () => {
    await g?.stop();
  });

  it('is published by the first, in the schema registry, with its statement and hash', async () => {
    const { version, schema } = await publishedDocument(g);
    expect(version).toBe(1);
    expect(schema['x-gatehouse-contract-sha256']).toBe(contractSha256(published));
    expect(schema['x-gatehouse-contract']).toMatchObject({ address: 'echo_note.v1', description: ECHO_NOTE.description });
  });

  it('refuses to start a second policy service whose schema differs under the same version; the first goes on serving', async () => {
    const starting = g.startPolicy('policy-edited', Catalog.load([edited]));
    await expect(starting).rejects.toMatchObject({ code: 'CONTRACT_CHANGED', retryable: false });
    // It names the tool, both hashes and where the schemas differ.
    const message = await starting.catch((error: unknown) => (error as Error).message);
    for (const part of [
      'echo_note.v1',
      contractSha256(published),
      contractSha256(edited),
      '/input/properties/forward_to',
      '/input/properties/note/maxLength',
    ])
      expect(message).toContain(part);
    expect(g.policies).toHaveLength(1);

    const result = await g.client.call('echo_note.v1', { note: 'hello' }, { runId: run.run_id, tenant: run.tenant });
    expect(result.ok && result.result).toEqual({ note: 'hello' });
    // What was published is what it was.
    expect((await publishedDocument(g)).schema['x-gatehouse-contract-sha256']).toBe(contractSha256(published));
  });

  it('starts a second policy service that holds the same contract', async () => {
    const second = await g.startPolicy('policy-same', Catalog.load([defineTool(spec)]));
    expect(g.policies).toContain(second);
    const result = await g.client.call('echo_note.v1', { note: 'again' }, { runId: run.run_id, tenant: run.tenant });
    expect(result.ok && result.result).toEqual({ note: 'again' });
  });
});
