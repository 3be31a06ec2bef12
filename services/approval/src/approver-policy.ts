import { ClaimPolicy } from '@gatehouse/identity';
import type { IdentityRefusalCode, PersonClaims } from '@gatehouse/identity';
import type { Approver } from './approvers.js';

export type ApproverOf =
  | { readonly ok: true; readonly approver: Approver }
  | { readonly ok: false; readonly code: Extract<IdentityRefusalCode, 'NOT_AN_APPROVER' | 'NO_TENANT'>; readonly message: string };

const WHAT = 'the approver policy';

/**
 * Who may decide what, from a person's claims at the identity provider (the mapping itself is
 * @gatehouse/identity's ClaimPolicy, which the policy service reads for its operators too). A
 * person whose claims map to no approver role, or to no tenant, is refused.
 */
export class ApproverPolicy {
  private constructor(private readonly mapping: ClaimPolicy) {}

  /** Checked at start-up: the schema, and that every role it grants is one the policy table asks for. */
  static parse(document: unknown, approverRoles: ReadonlySet<string>): ApproverPolicy {
    return new ApproverPolicy(ClaimPolicy.parse(WHAT, document, approverRoles));
  }

  static load(path: string, approverRoles: ReadonlySet<string>): ApproverPolicy {
    return new ApproverPolicy(ClaimPolicy.load(WHAT, path, approverRoles));
  }

  approverOf(claims: PersonClaims): ApproverOf {
    const person = this.mapping.personOf(claims);
    if (person.roles.length === 0)
      return { ok: false, code: 'NOT_AN_APPROVER', message: `${person.identity}'s claims map to no approver role` };
    if (person.tenants.length === 0) return { ok: false, code: 'NO_TENANT', message: `${person.identity}'s claims map to no tenant` };
    return { ok: true, approver: { ...person, demo: false } };
  }
}
