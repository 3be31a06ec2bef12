// Surface: GET /runs/:id/tools on the control API (docs/threat-model.md, "C5"). The attacker: anyone
// who reaches the control API, with run ids read off gatehouse.results or guessed, and an agent
// runtime's own run key. The promise: a run's tools are shown only to its own runtime (the request
// proves the run with its key) or to the trusted code that manages it, and the route tells no one
// else whether a run id is live: a live run and an unknown id get the same answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUN_PROOF_HEADER, RunKey } from '@gatehouse/events';
import { CONTROL_TOKEN, startGatehouse } from '../support/gatehouse.js';
import type { Gatehouse, RegisteredRun } from '../support/gatehouse.js';

describe("a caller who asks for a run's tools", () => {
  let g: Gatehouse;
  let own: RegisteredRun;
  let victim: RegisteredRun;

  beforeAll(async () => {
    g = await startGatehouse('atk-tools');
    own = await g.createRun('support-readonly');
    victim = await g.createRun('support-agent');
  });
  afterAll(async () => {
    await g?.stop();
  });

  const ask = async (runId: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> => {
    const response = await fetch(`${g.policies[0]?.url ?? ''}/runs/${encodeURIComponent(runId)}/tools`, { headers });
    return { status: response.status, body: await response.text() };
  };

  it('learns nothing without a proof or a token: a live run and an unknown id get the same 401', async () => {
    const live = await ask(victim.run_id);
    const unknown = await ask('run_00000000-0000-0000-0000-000000000000');
    expect(live.status).toBe(401);
    expect(unknown).toEqual(live);
  });

  it('learns nothing with a proof made by another run’s key, an invented key, or an old proof: each is the 404 of an unknown id', async () => {
    const now = Date.now();
    const unknownId = 'run_00000000-0000-0000-0000-000000000000';
    const answers = await Promise.all([
      ask(victim.run_id, { [RUN_PROOF_HEADER]: RunKey.parse(own.run_key).proveRequest(victim.run_id, now) }),
      ask(victim.run_id, { [RUN_PROOF_HEADER]: RunKey.generate().proveRequest(victim.run_id, now) }),
      ask(victim.run_id, { [RUN_PROOF_HEADER]: RunKey.parse(victim.run_key).proveRequest(victim.run_id, now - 10 * 60_000) }),
      ask(victim.run_id, { [RUN_PROOF_HEADER]: RunKey.parse(victim.run_key).proveRequest(own.run_id, now) }),
      ask(victim.run_id, { [RUN_PROOF_HEADER]: 'garbage' }),
      ask(unknownId, { [RUN_PROOF_HEADER]: RunKey.generate().proveRequest(unknownId, now) }),
    ]);
    for (const answer of answers) expect(answer).toEqual(answers[5]);
    expect(answers[5]?.status).toBe(404);
    expect(JSON.parse(answers[5]?.body ?? '{}')).toMatchObject({ error: { code: 'RUN_NOT_FOUND' } });
  });

  it('is shown the tools with the run’s own proof (its runtime’s client) or the managing trusted code’s token', async () => {
    const names = ((await g.client.tools(victim.run_id, 'mcp')) as { name: string }[]).map((t) => t.name);
    expect(names).toContain('commit_address_change_v2');
    const managed = await ask(victim.run_id, { authorization: `Bearer ${CONTROL_TOKEN}` });
    expect(managed.status).toBe(200);
    expect(JSON.parse(managed.body)).toMatchObject({ tools: expect.any(Array) as unknown });
  });
});
