import { readFileSync } from 'node:fs';
import { APPROVER_POLICY_SCHEMA, checkGrants, claimValues, ClaimMappingError, grantedBy } from './claim-grants.js';
import type { ClaimGrant } from './claim-grants.js';

/** A mapping document a pack or a deployment ships (the approver policy): which claims make a person what, in which tenants. */
export interface ClaimPolicyDocument {
  /** Claims tried in order for the name people and logs see (default: email, then preferred_username). */
  readonly display_claims?: readonly string[];
  readonly grants: readonly ClaimGrant[];
}

/** The claims of a verified token: issuer and subject always. */
export interface PersonClaims extends Readonly<Record<string, unknown>> {
  readonly iss: string;
  readonly sub: string;
}

/** A person as a mapping sees them: who (issuer and subject), how they are shown, and what their claims grant. */
export interface MappedPerson {
  /** How people and logs name them: the first display claim the token has, else the subject. */
  readonly identity: string;
  readonly issuer: string;
  readonly subject: string;
  /** Their display name (`name`), when the token gives one. */
  readonly name: string | null;
  /** When they last proved themselves to the identity provider (ms), when the token says. */
  readonly authTime: number | null;
  readonly roles: readonly string[];
  readonly tenants: readonly string[];
}

const DEFAULT_DISPLAY_CLAIMS = ['email', 'preferred_username'] as const;

/**
 * What a person may be, from their claims at the identity provider: a mapping, not a list of
 * people, so a leaver or a moved person changes at the IdP. Every service that knows people by
 * their claims (the approval service's approvers, the policy service's operators) reads the same
 * document through this, so one person maps to the same roles and tenants everywhere.
 */
export class ClaimPolicy {
  private constructor(private readonly document: ClaimPolicyDocument) {}

  /**
   * Checked once, at start-up: the schema, and that every role a grant gives is one of
   * `knownRoles`; `what` names the document in the error (ClaimMappingError).
   */
  static parse(what: string, document: unknown, knownRoles: ReadonlySet<string>): ClaimPolicy {
    return new ClaimPolicy(checkGrants<ClaimPolicyDocument>(what, APPROVER_POLICY_SCHEMA, document, knownRoles));
  }

  static load(what: string, path: string, knownRoles: ReadonlySet<string>): ClaimPolicy {
    let document: unknown;
    try {
      document = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    } catch (error) {
      throw new ClaimMappingError(`${what} ${path} cannot be read: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
    return ClaimPolicy.parse(what, document, knownRoles);
  }

  /** Whether any grant gives `role`: a role no grant names is held by no one. */
  grants(role: string): boolean {
    return this.document.grants.some((grant) => grant.roles?.includes(role) === true);
  }

  /** The person these claims name, with every role and tenant the grants give them (none: empty lists). */
  personOf(claims: PersonClaims): MappedPerson {
    const { roles, tenants } = grantedBy(this.document.grants, claims);
    const name = typeof claims['name'] === 'string' ? claims['name'].slice(0, 200) : null;
    const authTime = typeof claims['auth_time'] === 'number' ? claims['auth_time'] * 1000 : null;
    return { identity: this.displayOf(claims), issuer: claims.iss, subject: claims.sub, name, authTime, roles, tenants };
  }

  private displayOf(claims: PersonClaims): string {
    for (const claim of this.document.display_claims ?? DEFAULT_DISPLAY_CLAIMS) {
      const [value] = claimValues(claims, claim);
      if (value !== undefined && value.length > 0) return value.slice(0, 200);
    }
    return claims.sub.slice(0, 200);
  }
}
