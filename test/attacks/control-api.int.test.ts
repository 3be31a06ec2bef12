// Surface: the control API's run routes (docs/threat-model.md, "C3"). The attacker: trusted code of
// another team, holding a client-credentials token with the runs scope under a client of its own.
// The promise: a registering client manages only the runs it registered; another client's runs,
// of any tenant, do not exist for it: it can neither list, read, stop nor mint MCP tokens for them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Run } from '@gatehouse/state';
import { CONTROL_TOKEN, startGatehouse } from '../support/gatehouse.js';
import type { Gatehouse } from '../support/gatehouse.js';
import { orchestratorToken } from '../support/identity.js';
import { SECOND_ORCHESTRATOR } from '../support/test-realm.js';

describe("another registering client, at the control API, against the orchestrator's runs", () => {
  let g: Gatehouse;
  let run: Run;
  let mine: string;
  let theirs: string;

  beforeAll(async () => {
    g = await startGatehouse('atk-control', { identity: true });
    mine = await orchestratorToken();
    theirs = await orchestratorToken(SECOND_ORCHESTRATOR);
    const registered = await control('POST', '/runs', mine, {
      tenant: 'acme',
      principal: 'agent:support-bot',
      role: 'support-agent',
      environment: 'sandbox',
      ttl_ms: 600_000,
    });
    expect(registered.status).toBe(201);
    run = (await registered.json()) as Run;
  });
  afterAll(async () => {
    await g?.stop();
  });

  function control(method: string, path: string, token: string, body?: unknown): Promise<Response> {
    return fetch(`${g.policies[0]?.url ?? ''}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  it('finds none of them: the list is empty, a read, a stop and a token are all RUN_NOT_FOUND', async () => {
    const listed = (await (await control('GET', '/runs?tenant=acme', theirs)).json()) as { runs: Run[] };
    expect(listed.runs.map((r) => r.run_id)).not.toContain(run.run_id);
    for (const [method, path] of [
      ['GET', `/runs/${run.run_id}`],
      ['POST', `/runs/${run.run_id}/stop`],
      ['POST', `/runs/${run.run_id}/mcp-tokens`],
    ] as const) {
      const response = await control(method, path, theirs);
      expect([response.status, ((await response.json()) as { error: { code: string } }).error.code], `${method} ${path}`).toEqual([
        404,
        'RUN_NOT_FOUND',
      ]);
    }
    // Nothing happened to the run.
    const stored = (await (await control('GET', `/runs/${run.run_id}`, mine)).json()) as Run & { active: boolean };
    expect(stored.active).toBe(true);
    expect(stored.stopped_at).toBeNull();
  });

  it('leaves the client that registered them, and the deployment’s own control token, in charge of them', async () => {
    const listed = (await (await control('GET', '/runs?tenant=acme', mine)).json()) as { runs: Run[] };
    expect(listed.runs.map((r) => r.run_id)).toContain(run.run_id);
    expect((await control('POST', `/runs/${run.run_id}/mcp-tokens`, mine)).status).toBe(201);
    expect((await control('GET', `/runs/${run.run_id}`, CONTROL_TOKEN)).status).toBe(200);
    const stopped = await control('POST', `/runs/${run.run_id}/stop`, mine);
    expect(((await stopped.json()) as { outcome: string }).outcome).toBe('stopped');
  });
});
