// Who may settle an unknown outcome, against the real stack and Keycloak: a person whose claims give
// the operator role (ops-admin under the reference approver policy), in a tenant their claims give
// them, recorded under the issuer and subject their token proves. Each attacker holds exactly their
// own access; each refusal is set beside the honest operator's success on the same operation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerSupportCatalog } from '@gatehouse/example-customer-support';
import type { ToolResult } from '@gatehouse/events';
import { ClaimLedger } from '@gatehouse/state';
import type { Run } from '@gatehouse/state';
import { CONTROL_TOKEN, startGatehouse } from '../support/gatehouse.js';
import type { Gatehouse } from '../support/gatehouse.js';
import { ISSUER, orchestratorToken, PEOPLE, tokensOf } from '../support/identity.js';
import { pollUntil } from '../support/poll.js';
import { GLOBEX_OPERATOR } from '../support/test-realm.js';
import { sandboxAllowsWrites } from '../support/test-policy.js';
import { armFaults, collect, commit, preview } from '../support/writes.js';

interface ErrorBody {
  readonly error: { readonly code: string; readonly message: string };
}

/** A write of acme whose outcome Gatehouse could not learn: committed, the answer lost, the status query down. */
interface UnknownWrite {
  readonly key: string;
  readonly commandId: string;
  /** What the system of record shows: the response it stored under the key. */
  readonly evidence: Record<string, unknown>;
}

describe('operator resolutions are tied to a verified person with the operator role, in their tenants', () => {
  let g: Gatehouse;
  let run: Run;
  let results: Awaited<ReturnType<typeof collect<'results'>>>;
  let control: string;
  let street = 0;

  beforeAll(async () => {
    const catalog = customerSupportCatalog();
    g = await startGatehouse('operator-resolutions', { faults: true, identity: true, catalog, table: sandboxAllowsWrites(catalog) });
    control = g.policies[0]?.url ?? '';
    run = await g.createRun('support-agent', { tenant: 'acme' });
    results = await collect(g, 'results');
  });
  afterAll(async () => {
    await results.stop();
    await g.stop();
  });

  const unknownWrite = async (): Promise<UnknownWrite> => {
    street += 1;
    const proposalId = await preview(g, run, `${street} Unsettled Street`);
    await armFaults(g, { nextWrites: ['drop-after-commit'], statusDown: true });
    let commandId: string;
    try {
      const result = await commit(g, run, proposalId);
      if (result.ok || result.status !== 'unknown') throw new Error(`expected an unknown outcome, got ${JSON.stringify(result)}`);
      commandId = result.commandId;
    } finally {
      await armFaults(g, { statusDown: false });
    }
    const key = `${run.run_id}:${proposalId}:commit`;
    const { rows } = await g.customers.db.query<{ response: Record<string, unknown> }>(
      `select response from ${g.customers.t.idempotencyKeys} where key = $1`,
      [key],
    );
    const evidence = rows[0]?.response;
    if (evidence === undefined) throw new Error(`the customers service holds no response under ${key}`);
    return { key, commandId, evidence };
  };

  const lookUp = (key: string, token: string): Promise<Response> =>
    fetch(`${control}/operations/${encodeURIComponent(key)}`, { headers: { authorization: `Bearer ${token}` } });
  const resolveAs = (key: string, token: string, body: Record<string, unknown>): Promise<Response> =>
    fetch(`${control}/operations/${encodeURIComponent(key)}/resolve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const succeeded = (write: UnknownWrite): Record<string, unknown> => ({
    state: 'succeeded',
    evidence: 'the customers idempotency row shows the commit',
    result: write.evidence,
  });
  const stateOf = async (key: string): Promise<string | undefined> => (await new ClaimLedger(g.redis, g.keys).get(key))?.state;
  const codeOf = async (response: Response): Promise<string> => ((await response.json()) as ErrorBody).error.code;
  const personToken = async (person: { readonly username: string; readonly password: string }): Promise<string> =>
    (await tokensOf(person)).access_token;

  it("refuses trusted code: neither the orchestrator's client-credentials token, a token with the runs scope, nor the control token is an operator", async () => {
    const write = await unknownWrite();
    const orchestrator = await orchestratorToken();
    // The orchestrator's token is good at the control API, as trusted code.
    expect((await fetch(`${control}/runs?tenant=acme`, { headers: { authorization: `Bearer ${orchestrator}` } })).status).toBe(200);

    const byCode = await resolveAs(write.key, orchestrator, succeeded(write));
    expect(byCode.status).toBe(401);
    expect(await codeOf(byCode)).toBe('TOKEN_AUDIENCE_MISMATCH');
    expect((await lookUp(write.key, orchestrator)).status).toBe(401);
    // Even the operator's own token, once it carries the runs scope, is a control-API credential, not a person's sign-in.
    const withRunsScope = (await tokensOf(PEOPLE.ops, 'gatehouse-test', 'openid gatehouse.runs')).access_token;
    const scoped = await resolveAs(write.key, withRunsScope, succeeded(write));
    expect(scoped.status).toBe(403);
    expect(await codeOf(scoped)).toBe('NOT_AN_OPERATOR');
    const byControlToken = await resolveAs(write.key, CONTROL_TOKEN, succeeded(write));
    expect(byControlToken.status).toBe(401);
    expect(await codeOf(byControlToken)).toBe('TOKEN_MALFORMED');
    expect(await stateOf(write.key)).toBe('unknown');

    // The same resolution by the operator goes through.
    expect((await resolveAs(write.key, await personToken(PEOPLE.ops), succeeded(write))).status).toBe(200);
    expect(await stateOf(write.key)).toBe('succeeded');
  });

  it('refuses a person of the tenant whose claims give no operator role: a viewer and a support lead', async () => {
    const write = await unknownWrite();
    for (const person of [PEOPLE.viewer, PEOPLE.lead]) {
      const token = await personToken(person);
      const resolved = await resolveAs(write.key, token, succeeded(write));
      expect(resolved.status, person.username).toBe(403);
      expect(await codeOf(resolved)).toBe('NOT_AN_OPERATOR');
      const looked = await lookUp(write.key, token);
      expect(looked.status, person.username).toBe(403);
      expect(await codeOf(looked)).toBe('NOT_AN_OPERATOR');
    }
    expect(await stateOf(write.key)).toBe('unknown');

    const ops = await personToken(PEOPLE.ops);
    expect(await (await lookUp(write.key, ops)).json()).toMatchObject({ key: write.key, state: 'unknown', tenant: 'acme' });
    expect((await resolveAs(write.key, ops, succeeded(write))).status).toBe(200);
  });

  it('answers an operator of another tenant as if the operation did not exist, and leaves it unresolved', async () => {
    const write = await unknownWrite();
    const globexOps = await personToken(GLOBEX_OPERATOR);
    const absent = await lookUp(`${run.run_id}:p_none:commit`, globexOps);
    expect(absent.status).toBe(404);
    const absentBody: unknown = await absent.json();

    const looked = await lookUp(write.key, globexOps);
    expect(looked.status).toBe(404);
    expect(await looked.json()).toEqual(absentBody);
    const resolved = await resolveAs(write.key, globexOps, succeeded(write));
    expect(resolved.status).toBe(404);
    expect(await resolved.json()).toEqual(absentBody);
    expect(await stateOf(write.key)).toBe('unknown');

    // An operator of acme sees and settles it.
    const ops = await personToken(PEOPLE.ops);
    expect((await lookUp(write.key, ops)).status).toBe(200);
    expect((await resolveAs(write.key, ops, succeeded(write))).status).toBe(200);
  });

  it('records the resolver the token proves, refusing a body that names someone else', async () => {
    const write = await unknownWrite();
    const ops = await personToken(PEOPLE.ops);
    const claimed = await resolveAs(write.key, ops, { ...succeeded(write), resolved_by: 'someone-else' });
    expect(claimed.status).toBe(400);
    expect(await codeOf(claimed)).toBe('INVALID_REQUEST');
    expect(await stateOf(write.key)).toBe('unknown');

    const resolved = await resolveAs(write.key, ops, succeeded(write));
    expect(resolved.status).toBe(200);
    const omar = { issuer: ISSUER, subject: PEOPLE.ops.subject, name: PEOPLE.ops.name };
    expect(await resolved.json()).toEqual({ key: write.key, state: 'succeeded', command_id: write.commandId, resolved_by: omar });
    // The record in Redis names the person by issuer and subject; nothing the body said.
    const record = await g.redis.hgetall(g.keys.idempotency(write.key));
    expect(JSON.parse(record['resolved_by'] ?? '{}')).toEqual(omar);
    expect(JSON.stringify(record)).not.toContain('someone-else');
    expect((JSON.parse(record['outcome'] ?? '{}') as { origin?: string }).origin).toContain(PEOPLE.ops.subject);
    // The agent's command gets the final result.
    const final = await pollUntil(
      () => Promise.resolve(results.events.find((r: ToolResult) => r.command_id === write.commandId && r.status === 'ok')),
      10_000,
      'the final result of the resolved write',
    );
    expect(JSON.parse(final.result ?? '{}')).toMatchObject({ new_version: write.evidence['new_version'] });
  });
});
