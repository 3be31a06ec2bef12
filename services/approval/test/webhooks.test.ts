import { describe, expect, it } from 'vitest';
import { eventOf, notificationOf, parseWebhookEndpoints, retryDelayMs } from '../src/webhooks.js';
import type { StoredRequest } from '../src/request-repository.js';

const SECRET = `whsec_${Buffer.alloc(24, 1).toString('base64')}`;

const row = (overrides: Partial<StoredRequest> = {}): StoredRequest => ({
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
    arguments: '{"customer_id":"C-1","line1":"1 Secret Street"}',
    arguments_sha256: 'a'.repeat(64),
    target: { type: 'customer', id: 'C-1', version: 3 },
    effect: 'Change the address of C-1 to 1 Secret Street',
    diff: {
      changes: [{ field: 'line1', before: '"0 Old"', after: '"1 Secret Street"' }],
      recipients: [],
      amount: null,
      affected_records: 1,
      irreversible: [],
    },
    approver_role: 'support-lead',
    rule_id: 'r',
    requested_at: 1_700_000_000_000,
    expires_at: 1_800_000_000_000,
    on_behalf_of: null,
  },
  ...overrides,
});

describe('webhook notifications', () => {
  it('name the tool, role, expiry and console link, and never the arguments, the diff or the effect text', () => {
    const { id, body } = notificationOf(row(), 'approval.requested', 'https://approvals.example/');
    expect(id).toBe('approval.requested:p_1');
    expect(body).not.toContain('Secret Street');
    expect(JSON.parse(body)).toMatchObject({
      type: 'approval.requested',
      data: {
        tool: 'commit_address_change.v2',
        approver_role: 'support-lead',
        expires_at: '2027-01-15T08:00:00.000Z',
        console_url: 'https://approvals.example/#proposal=p_1',
      },
    });
  });

  it('carry no link but the console’s in their chat text, whatever names a run or an agent chose', () => {
    const hostile = row({
      request: {
        ...row().request,
        target: { type: 'customer', id: 'C-1 <https://evil.example|urgent>', version: 3 },
        on_behalf_of: { issuer: 'https://idp.example', subject: 's', name: 'Otto [click](http://evil.example/x) evil.example' },
      },
    });
    const { body } = notificationOf(hostile, 'approval.requested', 'https://approvals.example/');
    const { text, data } = JSON.parse(body) as { text: string; data: { target: { id: string } } };
    expect(text).not.toMatch(/evil\.example|https?:\/\/evil|[<>|[\]]/);
    expect(text.match(/https?:\/\/\S+/g)).toEqual(['https://approvals.example/#proposal=p_1']);
    expect(text).toContain('Otto clickhttp');
    expect(data.target.id).toBe('C-1 <https://evil.example|urgent>');
  });

  it('tell a withdrawal from a rejection by the service’s own decision', () => {
    expect(eventOf(row({ state: 'rejected', decided_by: 'gatehouse', reason: 'withdrawn' }), 'withdrawn')).toBe('approval.withdrawn');
    expect(eventOf(row({ state: 'rejected', decided_by: 'lead@acme.example', reason: 'withdrawn' }), 'withdrawn')).toBe(
      'approval.rejected',
    );
    expect(eventOf(row({ state: 'expired' }), 'withdrawn')).toBe('approval.expired');
  });

  it('back off by doubling, up to ten minutes', () => {
    expect([1, 2, 3, 4].map((a) => retryDelayMs(a, 1000))).toEqual([1000, 2000, 4000, 8000]);
    expect(retryDelayMs(30, 1000)).toBe(600_000);
  });

  it('refuse at start-up an endpoint without HTTPS, without its secret, or listed twice', () => {
    const ok = parseWebhookEndpoints(
      { endpoints: [{ id: 'chat', url: 'https://hooks.example/x', secret_env: 'CHAT_SECRET' }] },
      { CHAT_SECRET: SECRET },
    );
    expect(ok).toEqual([
      {
        id: 'chat',
        url: 'https://hooks.example/x',
        events: expect.arrayContaining(['approval.requested', 'approval.withdrawn']) as unknown,
        tenants: null,
        secret: SECRET,
      },
    ]);
    expect(
      parseWebhookEndpoints({ endpoints: [{ id: 'local', url: 'http://127.0.0.1:9000/x', secret_env: 'S' }] }, { S: SECRET }),
    ).toHaveLength(1);
    expect(() =>
      parseWebhookEndpoints({ endpoints: [{ id: 'plain', url: 'http://hooks.example/x', secret_env: 'S' }] }, { S: SECRET }),
    ).toThrow(/must be HTTPS/);
    expect(() => parseWebhookEndpoints({ endpoints: [{ id: 'chat', url: 'https://hooks.example/x', secret_env: 'MISSING' }] }, {})).toThrow(
      /MISSING must hold its secret/,
    );
    const twice = { endpoints: [1, 2].map(() => ({ id: 'chat', url: 'https://hooks.example/x', secret_env: 'S' })) };
    expect(() => parseWebhookEndpoints(twice, { S: SECRET })).toThrow(/listed twice/);
    expect(() =>
      parseWebhookEndpoints(
        { endpoints: [{ id: 'chat', url: 'https://hooks.example/x', secret_env: 'S', events: ['approval.maybe'] }] },
        { S: SECRET },
      ),
    ).toThrow(/invalid/);
  });
});
