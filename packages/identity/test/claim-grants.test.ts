import { describe, expect, it } from 'vitest';
import { checkGrants, claimValues, ClaimMappingError, grantedBy, GRANTS_SCHEMA } from '../src/index.js';
import type { ClaimGrant } from '../src/index.js';

const schema = { type: 'object', additionalProperties: false, required: ['grants'], properties: { grants: GRANTS_SCHEMA } };

const grants: ClaimGrant[] = [
  { claim: 'groups', value: 'support-leads', roles: ['support-lead'] },
  { claim: 'groups', value: 'ops-admins', roles: ['ops-admin', 'support-lead'] },
  { claim: 'tenant', value: 'acme', tenants: ['acme'] },
  { claim: 'realm_access.roles', value: 'globex-approver', roles: ['support-lead'], tenants: ['globex'] },
];

describe('claims mapped to roles and tenants', () => {
  it('reads string and array claims, and dotted paths into nested ones', () => {
    expect(claimValues({ tenant: 'acme' }, 'tenant')).toEqual(['acme']);
    expect(claimValues({ groups: ['a', 7, 'b'] }, 'groups')).toEqual(['a', 'b']);
    expect(claimValues({ realm_access: { roles: ['x'] } }, 'realm_access.roles')).toEqual(['x']);
    expect(claimValues({ groups: { a: 1 } }, 'groups')).toEqual([]);
    expect(claimValues({}, 'constructor')).toEqual([]);
    expect(claimValues({}, '__proto__.polluted')).toEqual([]);
  });

  it('adds up every grant whose claim holds its value, each role and tenant once', () => {
    expect(grantedBy(grants, { groups: ['support-leads', 'ops-admins'], tenant: ['acme'] })).toEqual({
      roles: ['ops-admin', 'support-lead'],
      tenants: ['acme'],
    });
    expect(grantedBy(grants, { realm_access: { roles: ['globex-approver'] } })).toEqual({ roles: ['support-lead'], tenants: ['globex'] });
  });

  it('gives nothing to claims no grant names', () => {
    expect(grantedBy(grants, { groups: ['Support-Leads'], tenant: 'ACME' })).toEqual({ roles: [], tenants: [] });
  });

  it('refuses at start-up a document that grants a role no rule asks for, or is malformed', () => {
    expect(checkGrants('the approver policy', schema, { grants }, new Set(['support-lead', 'ops-admin'])).grants).toHaveLength(4);
    expect(() => checkGrants('the approver policy', schema, { grants }, new Set(['support-lead']))).toThrow(
      /grants roles no rule asks for: ops-admin/,
    );
    expect(() => checkGrants('the approver policy', schema, { grants: [{ claim: 'groups', value: 'x' }] }, new Set())).toThrow(
      ClaimMappingError,
    );
    expect(() => checkGrants('the approver policy', schema, { grants: [] }, new Set())).toThrow(/must NOT have fewer than 1 items/);
  });
});
