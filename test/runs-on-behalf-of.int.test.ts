import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestDetail } from '@gatehouse/approval';
import type { ApprovalRequest, ExecutionOrder } from '@gatehouse/events';
import type { Run } from '@gatehouse/state';
import { decideAs } from './support/decide.js';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';
import { ISSUER, orchestratorToken, PEOPLE, signInAtLoginPage, tokensOf } from './support/identity.js';
import type { SignedIn } from './support/identity.js';
import { eventually } from './support/stack.js';
import { collect, currentVersion, preview } from './support/writes.js';

interface ErrorBody {
  readonly error: { readonly code: string; readonly message: string };
}

const OWNER = { issuer: ISSUER, subject: PEOPLE.owner.subject, name: PEOPLE.owner.name };

describe('runs registered by trusted code with an IdP token, acting on behalf of a person', () => {
  let g: Gatehouse;
  let requests: Awaited<ReturnType<typeof collect<'approvalsRequested'>>>;
  let orders: Awaited<ReturnType<typeof collect<'execute'>>>;

  beforeAll(async () => {
    g = await startGatehouse('onbehalf', { approval: true, identity: true });
    requests = await collect(g, 'approvalsRequested');
    orders = await collect(g, 'execute');
  });
  afterAll(async () => {
    await Promise.all([requests?.stop(), orders?.stop()]);
    await g?.stop();
  });

  const control = (path: string, token: string, body?: unknown) =>
    fetch(`${g.policies[0]?.url ?? ''}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const registration = {
    tenant: 'acme',
    principal: 'agent:support-bot',
    role: 'support-agent',
    environment: 'production',
    ttl_ms: 600_000,
  };

  it('registers a run with a client-credentials token and records the client and the person', async () => {
    const response = await control('/runs', await orchestratorToken(), { ...registration, on_behalf_of: OWNER });
    expect(response.status).toBe(201);
    const run = (await response.json()) as Run;
    expect(run.registered_by).toMatchObject({ issuer: ISSUER, client_id: 'gatehouse-orchestrator' });
    expect(run.registered_by?.subject).toMatch(/^[0-9a-f-]{36}$/);
    expect(run.on_behalf_of).toEqual(OWNER);
    const stored = (await (await control(`/runs/${run.run_id}`, await orchestratorToken())).json()) as Run;
    expect(stored).toMatchObject({ registered_by: { client_id: 'gatehouse-orchestrator' }, on_behalf_of: OWNER });
  });

  it('refuses a person’s token, a forged or missing token, and a person of another issuer', async () => {
    const personal = await control('/runs', (await tokensOf(PEOPLE.lead)).access_token, registration);
    const none = await fetch(`${g.policies[0]?.url ?? ''}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(registration),
    });
    const [header = '', payload = ''] = (await orchestratorToken()).split('.');
    const forged = await control('/runs', `${header}.${payload}.${'A'.repeat(86)}`, registration);
    const foreign = await control('/runs', await orchestratorToken(), {
      ...registration,
      on_behalf_of: { issuer: 'https://other.example', subject: PEOPLE.owner.subject },
    });
    const bodies = (await Promise.all([personal, none, forged, foreign].map((r) => r.json()))) as ErrorBody[];
    expect([personal.status, none.status, forged.status, foreign.status]).toEqual([401, 401, 401, 422]);
    expect(bodies.map((b) => b.error.code)).toEqual([
      'TOKEN_AUDIENCE_MISMATCH',
      'UNAUTHORIZED',
      'TOKEN_SIGNATURE_INVALID',
      'UNKNOWN_ISSUER',
    ]);
    expect(personal.headers.get('www-authenticate')).toMatch(/^Bearer realm="gatehouse", error="invalid_token"/);
  });

  it('carries the person on the approval request and its order, and refuses their own approval as SELF_APPROVAL', async () => {
    const created = await control('/runs', await orchestratorToken(), { ...registration, on_behalf_of: OWNER });
    const run = (await created.json()) as Run & { run_key: string };
    g.client.holdRunKey(run.run_id, run.run_key);
    const proposalId = await preview(g, run, '11 Behalf Road');
    const settled = g.client.call(
      'commit_address_change.v2',
      { proposal_id: proposalId },
      { runId: run.run_id, tenant: run.tenant, timeoutMs: 60_000 },
    );
    const request = await eventually(
      () => requests.events.find((r: ApprovalRequest) => r.proposal_id === proposalId),
      20_000,
      'the approval request',
    );
    expect(request.on_behalf_of).toEqual(OWNER);

    const url = g.approval?.url ?? '';
    const signIn = async (who: (typeof PEOPLE)[keyof typeof PEOPLE]): Promise<SignedIn> => {
      const step = await signInAtLoginPage(url, who);
      if (!step.ok) throw new Error(`${who.username} was refused: ${step.location}`);
      return step.signedIn;
    };
    const decide = (session: SignedIn) => decideAs<ErrorBody>(url, proposalId, 'approve', session);
    const owner = await signIn(PEOPLE.owner);
    const shown = (await (
      await fetch(`${url}/api/approvals/${proposalId}`, { headers: { cookie: owner.cookie } })
    ).json()) as RequestDetail;
    expect(shown).toMatchObject({ may_decide: false, may_not_because: 'SELF_APPROVAL', request: { on_behalf_of: OWNER } });
    const own = await decide(owner);
    expect([own.status, own.body.error.code]).toEqual([403, 'SELF_APPROVAL']);
    expect(await currentVersion(g)).toBe(17);

    const lead = await signIn(PEOPLE.lead);
    expect((await decide(lead)).status).toBe(200);
    const result = await settled;
    expect(result.ok).toBe(true);
    const order = await eventually(
      () => orders.events.find((o: ExecutionOrder) => o.proposal_id === proposalId && o.approval !== null),
      20_000,
      'the approved order',
    );
    expect(order.on_behalf_of).toEqual(OWNER);
  });
});
