import { readFileSync } from 'node:fs';
import { APPROVER_POLICY_SCHEMA, checkGrants, claimValues, grantedBy } from '@gatehouse/identity';
import type { ClaimGrant, IdentityRefusalCode } from '@gatehouse/identity';
import type { Approver } from './approvers.js';

/** The document a pack or a deployment ships: which claims make a person an approver of which roles and tenants. */
export interface ApproverPolicyDocument {
  /** Claims tried in order for the name people and logs see (default: email, then preferred_username). */
  readonly display_claims?: readonly string[];
  readonly grants: readonly ClaimGrant[];
}

/** The claims of a verified token: issuer and subject always. */
export interface PersonClaims extends Readonly<Record<string, unknown>> {
  readonly iss: string;
  readonly sub: string;
}

export type ApproverOf =
  | { readonly ok: true; readonly approver: Approver }
  | { readonly ok: false; readonly code: Extract<IdentityRefusalCode, 'NOT_AN_APPROVER' | 'NO_TENANT'>; readonly message: string };

/**
 * Who may decide what, from a person's claims at the identity provider: a mapping, not a list of
 * people, so a leaver or a moved person changes at the IdP, not here. A person whose claims map to
 * no approver role, or to no tenant, is refused.
 */
export class ApproverPolicy {
  private constructor(private readonly document: ApproverPolicyDocument) {}

  /** Checked at start-up: the schema, and that every role it grants is one the policy table asks for. */
  static parse(document: unknown, approverRoles: ReadonlySet<string>): ApproverPolicy {
    return new ApproverPolicy(checkGrants<ApproverPolicyDocument>('the approver policy', APPROVER_POLICY_SCHEMA, document, approverRoles));
  }

  static load(path: string, approverRoles: ReadonlySet<string>): ApproverPolicy {
    let document: unknown;
    try {
      document = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    } catch (error) {
      throw new Error(`the approver policy ${path} cannot be read: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
    return ApproverPolicy.parse(document, approverRoles);
  }

  approverOf(claims: PersonClaims): ApproverOf {
    const { roles, tenants } = grantedBy(this.document.grants, claims);
    const identity = this.displayOf(claims);
    if (roles.length === 0) return { ok: false, code: 'NOT_AN_APPROVER', message: `${identity}'s claims map to no approver role` };
    if (tenants.length === 0) return { ok: false, code: 'NO_TENANT', message: `${identity}'s claims map to no tenant` };
    const name = typeof claims['name'] === 'string' ? claims['name'].slice(0, 200) : null;
    const authTime = typeof claims['auth_time'] === 'number' ? claims['auth_time'] * 1000 : null;
    return { ok: true, approver: { identity, issuer: claims.iss, subject: claims.sub, name, authTime, roles, tenants, demo: false } };
  }

  private displayOf(claims: PersonClaims): string {
    for (const claim of this.document.display_claims ?? ['email', 'preferred_username']) {
      const [value] = claimValues(claims, claim);
      if (value !== undefined && value.length > 0) return value.slice(0, 200);
    }
    return claims.sub.slice(0, 200);
  }
}
