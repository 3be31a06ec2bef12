import { describe, expect, it } from 'vitest';
import { ApproverPolicy } from '../src/approver-policy.js';

const policy = ApproverPolicy.parse(
  {
    grants: [
      { claim: 'groups', value: 'support-leads', roles: ['support-lead'] },
      { claim: 'tenant', value: 'acme', tenants: ['acme'] },
    ],
  },
  new Set(['support-lead']),
);
const person = { iss: 'https://idp.example', sub: 'p-1', email: 'lena@acme.example', name: 'Lena Lead', auth_time: 1_700_000_000 };

describe('the approver policy', () => {
  it('makes an approver of the roles and tenants the claims map to, named by issuer and subject', () => {
    expect(policy.approverOf({ ...person, groups: ['support-leads'], tenant: ['acme'] })).toEqual({
      ok: true,
      approver: {
        identity: 'lena@acme.example',
        issuer: 'https://idp.example',
        subject: 'p-1',
        name: 'Lena Lead',
        authTime: 1_700_000_000_000,
        roles: ['support-lead'],
        tenants: ['acme'],
        demo: false,
      },
    });
  });

  it('refuses claims that map to no approver role, or to no tenant', () => {
    expect(policy.approverOf({ ...person, groups: ['everyone'], tenant: ['acme'] })).toMatchObject({ ok: false, code: 'NOT_AN_APPROVER' });
    expect(policy.approverOf({ ...person, groups: ['support-leads'] })).toMatchObject({ ok: false, code: 'NO_TENANT' });
  });

  it('is refused at start-up when it grants a role no policy rule asks for', () => {
    expect(() => ApproverPolicy.parse({ grants: [{ claim: 'groups', value: 'x', roles: ['intern'] }] }, new Set(['support-lead']))).toThrow(
      /grants roles no rule asks for: intern/,
    );
  });
});
