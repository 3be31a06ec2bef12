import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generateSigningKey } from '@gatehouse/events';
import type { AccessTokenVerifier, TokenCheck } from '@gatehouse/identity';
import { loadOperatorPolicy, Operators, policyConfigFromEnv } from '@gatehouse/policy';
import type { OperatorIdentity } from '@gatehouse/policy';

const ISSUER = 'https://idp.example/realms/acme';
const REFERENCE_POLICY = fileURLToPath(new URL('../../../examples/customer-support/pack/config/approver-policy.json', import.meta.url));
const APPROVER_ROLES = new Set(['support-lead', 'ops-admin']);

/** A verifier that answers `check` for any token: the signature path is @gatehouse/identity's, tested there. */
const verifierAnswering = (check: TokenCheck): AccessTokenVerifier =>
  ({ issuer: ISSUER, audience: 'gatehouse-approval', verify: () => Promise.resolve(check) }) as unknown as AccessTokenVerifier;

const claims = (extra: Record<string, unknown>): TokenCheck => ({
  ok: true,
  claims: { iss: ISSUER, sub: 'person-1', exp: Math.floor(Date.now() / 1000) + 300, azp: 'gatehouse-cli', ...extra },
});

const operators = (check: TokenCheck, overrides: Partial<OperatorIdentity> = {}): Operators =>
  new Operators({
    accessTokens: verifierAnswering(check),
    policy: loadOperatorPolicy(REFERENCE_POLICY, APPROVER_ROLES, 'ops-admin'),
    role: 'ops-admin',
    runsScope: 'gatehouse.runs',
    ...overrides,
  });

const OPS = { email: 'ops@acme.example', name: 'Omar Ops', groups: ['ops-admins'], tenant: ['acme'] };

describe('operators, people proved by the identity provider with the operator role', () => {
  it('takes a person whose claims give the operator role, with their tenants, named by issuer and subject', async () => {
    expect(await operators(claims(OPS)).authenticate('Bearer t')).toEqual({
      ok: true,
      operator: { issuer: ISSUER, subject: 'person-1', name: 'Omar Ops', identity: 'ops@acme.example', tenants: ['acme'] },
    });
  });

  it('refuses a person whose claims map to no operator role, or to no tenant', async () => {
    const lead = await operators(claims({ ...OPS, groups: ['support-leads'] })).authenticate('Bearer t');
    expect(lead).toMatchObject({ ok: false, code: 'NOT_AN_OPERATOR', status: 403 });
    expect(lead.ok === false && lead.message).toContain("ops@acme.example's claims map to no ops-admin role");
    expect(await operators(claims({ ...OPS, tenant: [] })).authenticate('Bearer t')).toMatchObject({
      ok: false,
      code: 'NO_TENANT',
      status: 403,
    });
  });

  it("refuses trusted code's tokens even when their claims would map: the runs scope, or the client as subject", async () => {
    const withRunsScope = await operators(claims({ ...OPS, scope: 'openid gatehouse.runs' })).authenticate('Bearer t');
    expect(withRunsScope).toMatchObject({ ok: false, code: 'NOT_AN_OPERATOR', status: 403 });
    const clientCredentials = await operators(claims({ ...OPS, sub: 'orchestrator', client_id: 'orchestrator' })).authenticate('Bearer t');
    expect(clientCredentials).toMatchObject({ ok: false, code: 'NOT_AN_OPERATOR' });
    expect(await operators(claims({ ...OPS, idtyp: 'app' })).authenticate('Bearer t')).toMatchObject({
      ok: false,
      code: 'NOT_AN_OPERATOR',
    });
  });

  it('answers 401 with a challenge for no bearer token or a refused one, and refuses everyone where no IdP or policy is set', async () => {
    expect(await operators(claims(OPS)).authenticate(undefined)).toMatchObject({
      ok: false,
      code: 'UNAUTHORIZED',
      status: 401,
      challenge: 'Bearer realm="gatehouse-operations"',
    });
    expect(await operators({ ok: false, reason: 'wrong_audience', detail: 'for gatehouse-policy' }).authenticate('Bearer t')).toMatchObject(
      { ok: false, code: 'TOKEN_AUDIENCE_MISMATCH', status: 401, message: 'for gatehouse-policy' },
    );
    expect(await new Operators(undefined).authenticate('Bearer t')).toMatchObject({ ok: false, code: 'UNAUTHORIZED', status: 401 });
    expect(await operators(claims(OPS), { policy: undefined }).authenticate('Bearer t')).toMatchObject({
      ok: false,
      code: 'NOT_AN_OPERATOR',
    });
  });

  it('reads the approver policy knowing the operator role, and refuses one granting roles no one asks for', () => {
    expect(loadOperatorPolicy(undefined, APPROVER_ROLES, 'ops-admin')).toBeUndefined();
    expect(loadOperatorPolicy(REFERENCE_POLICY, new Set(['support-lead']), 'ops-admin')?.grants('ops-admin')).toBe(true);
    expect(() => loadOperatorPolicy(REFERENCE_POLICY, new Set(['support-lead']), 'operator')).toThrow(
      /grants roles no rule asks for: ops-admin/,
    );
  });

  it('configures operators with the identity provider only: the approval audience and ops-admin by default', () => {
    const signing = { GATEHOUSE_SIGNING_KEY: generateSigningKey('unit').signingKey };
    expect(policyConfigFromEnv({ ...signing, GATEHOUSE_CONTROL_TOKEN: 'a-control-token-of-some-length' }).operators).toBeUndefined();
    const idp = { ...signing, GATEHOUSE_OIDC_ISSUER: ISSUER };
    expect(policyConfigFromEnv(idp)).toMatchObject({
      operators: { audience: 'gatehouse-approval', role: 'ops-admin' },
      approverPolicyFile: undefined,
    });
    expect(
      policyConfigFromEnv({
        ...idp,
        POLICY_OPERATOR_AUDIENCE: 'gatehouse-operations',
        POLICY_OPERATOR_ROLE: 'operator',
        GATEHOUSE_APPROVER_POLICY_FILE: '/etc/gatehouse/approver-policy.json',
      }),
    ).toMatchObject({
      operators: { audience: 'gatehouse-operations', role: 'operator' },
      approverPolicyFile: '/etc/gatehouse/approver-policy.json',
    });
  });
});
