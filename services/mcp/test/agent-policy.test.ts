import { describe, expect, it } from 'vitest';
import type { VerifiedClaims } from '@gatehouse/identity';
import { AgentPolicy, mcpConfigFromEnv } from '@gatehouse/mcp';
import { generateSigningKey } from '@gatehouse/events';

const ROLES = { 'support-agent': ['get_customer.v1', 'commit_address_change.v2'], 'support-readonly': ['get_customer.v1'] };
const RULE = { claim: 'groups', value: 'agent-owners', role: 'support-agent', run_ttl_ms: 3_600_000 };
const claims = (extra: Record<string, unknown>): VerifiedClaims => ({
  iss: 'https://idp.example',
  sub: 'person-1',
  exp: 2_000_000_000,
  iat: 1_900_000_000,
  ...extra,
});

describe('the agent policy: which people an MCP client may act for', () => {
  it('is refused at start-up for an unknown role, a tool outside the role, or a run longer than allowed, naming each', () => {
    const parse = (rules: unknown[]) => () => AgentPolicy.parse({ rules }, ROLES, 86_400_000);
    expect(parse([{ ...RULE, role: 'root' }])).toThrow(/\/rules\/0\/role: no role root in the pack/);
    expect(parse([{ ...RULE, capabilities: ['delete_all.v1'] }])).toThrow(/delete_all\.v1 is not a live tool of role support-agent/);
    expect(parse([{ ...RULE, run_ttl_ms: 90_000_000 }])).toThrow(/run_ttl_ms: at most 86400000/);
    expect(parse([{ ...RULE, extra: true }])).toThrow(/must NOT have additional properties/);
  });

  it('gives a matching person one run per sign-in session, on their behalf, in their one tenant', () => {
    const policy = AgentPolicy.parse({ rules: [RULE] }, ROLES, 86_400_000);
    const person = claims({ groups: ['agent-owners'], tenant: ['acme'], sid: 's-1', email: 'owner@acme.example', azp: 'desktop' });
    const first = policy.agentOf(person, 'gatehouse-mcp', 1_000);
    const again = policy.agentOf(person, 'gatehouse-mcp', 5_000);
    const otherSession = policy.agentOf({ ...person, sid: 's-2' }, 'gatehouse-mcp', 5_000);
    if (!first.ok || !again.ok || !otherSession.ok) throw new Error('expected runs');
    expect(first.run).toMatchObject({
      tenant: 'acme',
      role: 'support-agent',
      capabilities: ['commit_address_change.v2', 'get_customer.v1'],
      on_behalf_of: { issuer: 'https://idp.example', subject: 'person-1', name: 'owner@acme.example' },
      registered_by: { client_id: 'gatehouse-mcp' },
      principal: 'agent:mcp:desktop',
      expires_at: 1_000 + 3_600_000,
    });
    expect(again.run.run_id).toBe(first.run.run_id);
    expect(otherSession.run.run_id).not.toBe(first.run.run_id);
  });

  it("registers a sign-in's run to expire with the token it came with, and bounds its lifetime by run_ttl_ms", () => {
    const policy = AgentPolicy.parse({ rules: [RULE] }, ROLES, 86_400_000);
    const now = 1_900_000_000_000;
    const shortToken = claims({ groups: ['agent-owners'], tenant: ['acme'], sid: 's-1', exp: now / 1000 + 300 });
    const agent = policy.agentOf(shortToken, 'gatehouse-mcp', now);
    if (!agent.ok) throw new Error('expected a run');
    expect(agent.run.expires_at).toBe(now + 300_000);
    expect(agent.lifetimeMs).toBe(3_600_000);
    const longToken = policy.agentOf({ ...shortToken, exp: now / 1000 + 7_200 }, 'gatehouse-mcp', now);
    expect(longToken.ok && longToken.run.expires_at).toBe(now + 3_600_000);
  });

  it('refuses a person no rule matches, and one whose tenant claim names none or several', () => {
    const policy = AgentPolicy.parse({ rules: [RULE] }, ROLES, 86_400_000);
    expect(policy.agentOf(claims({ groups: ['viewers'], tenant: ['acme'] }), 'gatehouse-mcp')).toMatchObject({
      ok: false,
      code: 'NOT_AN_AGENT_OWNER',
    });
    expect(policy.agentOf(claims({ groups: ['agent-owners'], tenant: ['acme', 'globex'] }), 'gatehouse-mcp')).toMatchObject({
      ok: false,
      code: 'NO_TENANT',
    });
    expect(policy.agentOf(claims({ groups: ['agent-owners'] }), 'gatehouse-mcp')).toMatchObject({ ok: false, code: 'NO_TENANT' });
  });

  it('needs the identity provider and a public URL beside the agent policy file', () => {
    const keys = {
      GATEHOUSE_POLICY_KEYS: generateSigningKey('unit-policy').trustedKey,
      GATEHOUSE_APPROVAL_KEYS: generateSigningKey('unit-approval').trustedKey,
      GATEHOUSE_EXECUTOR_KEYS: generateSigningKey('unit-executor').trustedKey,
      MCP_AGENT_POLICY_FILE: '/etc/gatehouse/agent-policy.json',
    };
    expect(() => mcpConfigFromEnv(keys)).toThrow(/MCP_AGENT_POLICY_FILE: needs GATEHOUSE_OIDC_ISSUER/);
    expect(() => mcpConfigFromEnv({ ...keys, GATEHOUSE_OIDC_ISSUER: 'https://idp.example' })).toThrow(
      /MCP_AGENT_POLICY_FILE: needs MCP_PUBLIC_URL/,
    );
    expect(
      mcpConfigFromEnv({ ...keys, GATEHOUSE_OIDC_ISSUER: 'https://idp.example', MCP_PUBLIC_URL: 'https://mcp.example' }).signIn,
    ).toMatchObject({ issuer: 'https://idp.example', scope: 'gatehouse.mcp' });
  });
});
