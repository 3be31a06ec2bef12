import { describe, expect, it } from 'vitest';
import { ClaimMappingError, ClaimPolicy } from '../src/index.js';

const document = {
  display_claims: ['email', 'preferred_username'],
  grants: [
    { claim: 'groups', value: 'support-leads', roles: ['support-lead'] },
    { claim: 'groups', value: 'ops-admins', roles: ['ops-admin', 'support-lead'] },
    { claim: 'tenant', value: 'acme', tenants: ['acme'] },
  ],
};
const ROLES = new Set(['support-lead', 'ops-admin']);
const ISSUER = 'https://idp.example/realms/acme';

describe('a claims mapping read as a policy of people', () => {
  it('names a person by issuer and subject, shows them by the first display claim, and adds up their grants', () => {
    const policy = ClaimPolicy.parse('the approver policy', document, ROLES);
    expect(
      policy.personOf({
        iss: ISSUER,
        sub: 'person-1',
        preferred_username: 'omar',
        name: 'Omar Ops',
        auth_time: 1_700_000_000,
        groups: ['ops-admins'],
        tenant: ['acme', 'globex'],
      }),
    ).toEqual({
      identity: 'omar',
      issuer: ISSUER,
      subject: 'person-1',
      name: 'Omar Ops',
      authTime: 1_700_000_000_000,
      roles: ['ops-admin', 'support-lead'],
      tenants: ['acme'],
    });
  });

  it('grants nothing by default and shows a person with no display claim by their subject', () => {
    const policy = ClaimPolicy.parse('the approver policy', document, ROLES);
    expect(policy.personOf({ iss: ISSUER, sub: 'person-2' })).toMatchObject({
      identity: 'person-2',
      name: null,
      authTime: null,
      roles: [],
      tenants: [],
    });
  });

  it('says whether any grant gives a role', () => {
    const policy = ClaimPolicy.parse('the approver policy', document, ROLES);
    expect(policy.grants('ops-admin')).toBe(true);
    expect(policy.grants('auditor')).toBe(false);
  });

  it('refuses a document that grants a role no one asks for, or cannot be read, naming it', () => {
    expect(() => ClaimPolicy.parse('the approver policy', document, new Set(['support-lead']))).toThrow(
      /the approver policy grants roles no rule asks for: ops-admin/,
    );
    expect(() => ClaimPolicy.load('the approver policy', '/nonexistent/approver-policy.json', ROLES)).toThrow(ClaimMappingError);
    expect(() => ClaimPolicy.load('the approver policy', '/nonexistent/approver-policy.json', ROLES)).toThrow(
      /the approver policy \/nonexistent\/approver-policy\.json cannot be read/,
    );
  });
});
