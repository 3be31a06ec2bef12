import { describe, expect, it } from 'vitest';
import { createLogger } from '@gatehouse/telemetry';
import { buildApi } from '../src/api.js';
import { ApprovalDecisions, signedInRecently } from '../src/approval-decisions.js';
import type { ShownProposal } from '../src/approval-decisions.js';
import { ApproverAuth } from '../src/approver-auth.js';
import type { Approver } from '../src/approvers.js';
import { Approvers, tokenSha256 } from '../src/approvers.js';
import type { DecisionPublisher } from '../src/decision-publisher.js';
import type { ApproveChange, RejectChange, RequestRepository, StoredRequest } from '../src/request-repository.js';
import type { SessionStore } from '../src/sessions.js';

const logger = createLogger('approval-test', { level: 'silent' });
const SHA = 'a'.repeat(64);
const TOKEN = 'unit-test-lead-token';

const lead: Approver = {
  identity: 'lead@acme.example',
  issuer: 'https://idp.example',
  subject: 'lead-1',
  name: 'Lena Lead',
  authTime: null,
  roles: ['support-lead'],
  tenants: ['acme'],
  demo: false,
};

const stored = (overrides: Partial<StoredRequest['request']> = {}): StoredRequest => ({
  proposal_id: 'p_1',
  tenant: 'acme',
  state: 'pending',
  command_id: 'cmd-1',
  command_ids: ['cmd-1'],
  expires_at: 1_800_000_000_000,
  decision_id: null,
  decided_by: null,
  decider: null,
  decided_at: null,
  reason: null,
  approver_roles: null,
  approval_id: null,
  approval_expires_at: null,
  order_id: null,
  published_at: null,
  carried_headers: null,
  request_proof: null,
  decision_seal: null,
  now: 1_700_000_000_000,
  request: {
    schema_version: 1,
    proposal_id: 'p_1',
    command_id: 'cmd-1',
    run_id: 'run-1',
    tenant: 'acme',
    principal: 'agent:bot',
    environment: 'production',
    tool: 'commit_address_change.v2',
    arguments: '{"customer_id":"C-1"}',
    arguments_sha256: SHA,
    target: { type: 'customer', id: 'C-1', version: 3 },
    effect: 'Change the address of C-1',
    diff: { changes: [], recipients: [], amount: null, affected_records: 1, irreversible: [] },
    approver_role: 'support-lead',
    rule_id: 'r',
    requested_at: 1_700_000_000_000,
    expires_at: 1_800_000_000_000,
    on_behalf_of: null,
    recent_sign_in_s: null,
    ...overrides,
  },
});

/** A repository holding one row, recording every change asked of it; and a publisher recording what it publishes. */
function world(row: StoredRequest) {
  const recorded: (ApproveChange | RejectChange)[] = [];
  const published: StoredRequest[] = [];
  const repository = {
    get: (id: string) => Promise.resolve(id === row.proposal_id ? row : undefined),
    approve: (_id: string, change: ApproveChange) => {
      recorded.push(change);
      return Promise.resolve({ ...row, state: 'approved' as const, decided_by: change.identity });
    },
    reject: (_id: string, change: RejectChange) => {
      recorded.push(change);
      return Promise.resolve({ ...row, state: 'rejected' as const, decided_by: change.identity, reason: change.reason });
    },
  } as unknown as RequestRepository;
  const publisher = {
    publish: (decided: StoredRequest) => {
      published.push(decided);
      return Promise.resolve();
    },
    // Every stored request here is taken as the policy service signed it (seals are tested across the stack).
    untrusted: () => undefined,
    sealOf: () => ({}),
  } as unknown as DecisionPublisher;
  return { decisions: new ApprovalDecisions(repository, publisher, 60_000, logger), recorded, published };
}

const shownOf = (row: StoredRequest): ShownProposal => ({
  arguments_sha256: row.request.arguments_sha256,
  target_version: row.request.target.version,
});

describe('a decision carries what the person was shown', () => {
  it('approves when the hash and target version are the stored request’s', async () => {
    const row = stored();
    const w = world(row);
    const outcome = await w.decisions.approve(lead, 'p_1', shownOf(row));
    expect(outcome.ok).toBe(true);
    expect(w.recorded).toHaveLength(1);
    expect(w.published.map((r) => r.state)).toEqual(['approved']);
  });

  it.each([
    ['another arguments_sha256', { arguments_sha256: 'b'.repeat(64), target_version: 3 }],
    ['an older target version', { arguments_sha256: SHA, target_version: 2 }],
    ['no target version where the stored one has one', { arguments_sha256: SHA, target_version: null }],
  ])('refuses an approval of %s with 409 PROPOSAL_MISMATCH and records nothing', async (_what, shown: ShownProposal) => {
    const w = world(stored());
    const outcome = await w.decisions.approve(lead, 'p_1', shown);
    expect(outcome).toMatchObject({ ok: false, error: { status: 409, code: 'PROPOSAL_MISMATCH' } });
    expect(w.recorded).toEqual([]);
    expect(w.published).toEqual([]);
  });

  it('refuses a target version where the stored target has none', async () => {
    const row = stored({ target: { type: 'customer', id: 'C-1', version: null } });
    const w = world(row);
    expect(await w.decisions.approve(lead, 'p_1', { arguments_sha256: SHA, target_version: 0 })).toMatchObject({
      ok: false,
      error: { code: 'PROPOSAL_MISMATCH' },
    });
    expect((await w.decisions.approve(lead, 'p_1', shownOf(row))).ok).toBe(true);
  });

  it('refuses a rejection of another version with PROPOSAL_MISMATCH and records nothing', async () => {
    const w = world(stored());
    const outcome = await w.decisions.reject(lead, 'p_1', { arguments_sha256: SHA, target_version: 4 }, 'not now');
    expect(outcome).toMatchObject({ ok: false, error: { status: 409, code: 'PROPOSAL_MISMATCH' } });
    expect(w.recorded).toEqual([]);
    expect(w.published).toEqual([]);
  });

  it('refuses a mismatch before asking for a step-up sign-in', async () => {
    const w = world(stored({ recent_sign_in_s: 60 }));
    const outcome = await w.decisions.approve(lead, 'p_1', { arguments_sha256: 'c'.repeat(64), target_version: 3 });
    expect(outcome).toMatchObject({ ok: false, error: { code: 'PROPOSAL_MISMATCH' } });
  });

  it('sends a step-up back to the proposal to be shown again, never to an approval in the address', async () => {
    const row = stored({ recent_sign_in_s: 60 });
    const w = world(row);
    const outcome = await w.decisions.approve(lead, 'p_1', shownOf(row));
    expect(outcome).toMatchObject({ ok: false, error: { status: 401, code: 'STEP_UP_REQUIRED' } });
    const signIn = outcome.ok ? '' : (outcome.error.signIn ?? '');
    expect(new URL(signIn, 'http://console.example').searchParams.get('return')).toBe('/#proposal=p_1');
    expect(signIn).not.toContain('approve');
    expect(w.recorded).toEqual([]);
  });
});

describe('a step-up rule’s recent sign-in', () => {
  it('counts whole seconds since auth_time, as the IdP counts max_age, so the IdP never returns a person unasked', () => {
    const row = stored({ recent_sign_in_s: 4 });
    const signedIn = { ...lead, authTime: 1_700_000_000_000 };
    expect(signedInRecently(signedIn, row, 1_700_000_004_999)).toBe(true);
    expect(signedInRecently(signedIn, row, 1_700_000_005_000)).toBe(false);
    expect(signedInRecently({ ...lead, authTime: null }, row, 1_700_000_000_000)).toBe(false);
  });
});

describe('the decision routes', () => {
  /** The API over one stored row, with a bearer-token approver; what the decider was asked. */
  function api(row: StoredRequest) {
    const w = world(row);
    const approvers = Approvers.parse({
      approvers: [{ identity: lead.identity, token_sha256: tokenSha256(TOKEN), roles: lead.roles, tenants: lead.tenants }],
    });
    const app = buildApi({
      repository: { get: () => Promise.resolve(row) } as unknown as RequestRepository,
      decider: w.decisions,
      auth: new ApproverAuth({} as SessionStore, logger, undefined, approvers),
      sessionCookie: () => 'gatehouse_session',
      assets: { html: '', script: '', style: '' },
      logger,
      health: {
        live: () => ({ statusCode: 200, body: { status: 'up' } }),
        ready: () => Promise.resolve({ statusCode: 200, body: { ready: true, checks: {} } }),
      },
    });
    const post = (path: string, payload?: unknown) =>
      app.inject({
        method: 'POST',
        url: `/api/approvals/p_1/${path}`,
        headers: { authorization: `Bearer ${TOKEN}` },
        ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
      });
    return { app, post, ...w };
  }

  it.each([
    ['no body', undefined],
    ['an empty body', {}],
    ['no target_version', { arguments_sha256: SHA }],
    ['no arguments_sha256', { target_version: 3 }],
    ['an upper-case hash', { arguments_sha256: 'A'.repeat(64), target_version: 3 }],
    ['a short hash', { arguments_sha256: 'a'.repeat(63), target_version: 3 }],
    ['a fractional version', { arguments_sha256: SHA, target_version: 3.5 }],
  ])('refuse an approval with %s as INVALID_REQUEST, deciding nothing', async (_what, payload) => {
    const { app, post, recorded } = api(stored());
    const reply = await post('approve', payload);
    expect(reply.statusCode).toBe(400);
    expect(reply.json()).toMatchObject({ error: { code: 'INVALID_REQUEST' } });
    expect(recorded).toEqual([]);
    await app.close();
  });

  it('refuse a rejection without what was shown as INVALID_REQUEST, deciding nothing', async () => {
    const { app, post, recorded } = api(stored());
    const reply = await post('reject', { reason: 'not now' });
    expect(reply.statusCode).toBe(400);
    expect(recorded).toEqual([]);
    await app.close();
  });

  it('answer a stale hash with 409 PROPOSAL_MISMATCH and a matching one with the decision', async () => {
    const row = stored();
    const { app, post, recorded } = api(row);
    const stale = await post('approve', { arguments_sha256: 'd'.repeat(64), target_version: 3 });
    expect(stale.statusCode).toBe(409);
    expect(stale.json()).toMatchObject({ error: { code: 'PROPOSAL_MISMATCH' } });
    expect(recorded).toEqual([]);
    const approved = await post('approve', { arguments_sha256: SHA, target_version: 3 });
    expect(approved.statusCode).toBe(200);
    expect(approved.json()).toMatchObject({ state: 'approved', published: true });
    const rejected = await post('reject', { arguments_sha256: SHA, target_version: 3, reason: 'not now' });
    expect(rejected.statusCode).toBe(200);
    expect(recorded).toHaveLength(2);
    await app.close();
  });
});
