import { ClaimPolicy, refusalOfToken } from '@gatehouse/identity';
import type { AccessTokenVerifier, IdentityRefusalCode, VerifiedClaims } from '@gatehouse/identity';
import { callerRefused, scopesOf } from './trusted-callers.js';
import type { CallerRefused } from './trusted-callers.js';

/** People who settle what Gatehouse could not: proved by the identity provider, mapped by the approver policy. */
export interface OperatorIdentity {
  /** Checks people's access tokens for the operator routes' audience (POLICY_OPERATOR_AUDIENCE). */
  readonly accessTokens: AccessTokenVerifier;
  /** Maps a person's claims to roles and tenants: the approver policy in force. Absent: no one is an operator. */
  readonly policy: ClaimPolicy | undefined;
  /** The role that makes a person an operator (POLICY_OPERATOR_ROLE). */
  readonly role: string;
  /** The scope of trusted code's tokens (POLICY_RUNS_SCOPE): a token that carries it is code's, never a person's. */
  readonly runsScope: string;
}

/**
 * The approver policy as the policy service reads it, for operators: the document the approval
 * service reads (checked the same way, the operator role known beside the roles the policy table
 * asks for). No file: undefined, and no one is an operator.
 */
export function loadOperatorPolicy(file: string | undefined, approverRoles: ReadonlySet<string>, role: string): ClaimPolicy | undefined {
  return file === undefined ? undefined : ClaimPolicy.load('the approver policy', file, new Set([...approverRoles, role]));
}

/** An operator as a request proved them: recorded as the resolver, limited to their tenants. */
export interface Operator {
  readonly issuer: string;
  readonly subject: string;
  readonly name: string | null;
  /** How logs name them (email or user name), never what they are recorded under. */
  readonly identity: string;
  readonly tenants: readonly string[];
}

export type OperatorCheck = { readonly ok: true; readonly operator: Operator } | CallerRefused;

function refused(code: IdentityRefusalCode, message?: string): OperatorCheck {
  return callerRefused(code, 'gatehouse-operations', message);
}

/**
 * Whether a token is a client's own rather than a person's: it carries the runs scope (only trusted
 * code may), or names its client as its subject (client credentials, RFC 9068 §2.2), or says so
 * (Entra ID's `idtyp: app`).
 */
function isClientToken(claims: VerifiedClaims, runsScope: string): boolean {
  if (scopesOf(claims).includes(runsScope)) return true;
  if (claims['idtyp'] === 'app') return true;
  return [claims['client_id'], claims['azp'], claims['cid']].some((client) => typeof client === 'string' && client === claims.sub);
}

/**
 * Who may look up and resolve operations: a person, proved by an access token of the identity
 * provider, whose claims give them the operator role; and only in the tenants their claims give
 * them. Neither the local control token nor trusted code's client-credentials token is one.
 */
export class Operators {
  constructor(private readonly identity: OperatorIdentity | undefined) {}

  async authenticate(authorization: string | undefined): Promise<OperatorCheck> {
    if (this.identity === undefined)
      return refused(
        'UNAUTHORIZED',
        'this deployment names no identity provider (GATEHOUSE_OIDC_ISSUER): operators are people signed in there',
      );
    if (authorization === undefined || !authorization.startsWith('Bearer '))
      return refused('UNAUTHORIZED', "an operator's access token is required (gatehouse operations sign-in)");
    const check = await this.identity.accessTokens.verify(authorization.slice(7).trim());
    if (!check.ok) return refused(refusalOfToken(check.reason), check.detail);
    const { claims } = check;
    if (isClientToken(claims, this.identity.runsScope))
      return refused('NOT_AN_OPERATOR', "the token is trusted code's (client credentials), not a person's: operators are people");
    if (this.identity.policy === undefined)
      return refused('NOT_AN_OPERATOR', 'no approver policy maps people to the operator role here (GATEHOUSE_APPROVER_POLICY_FILE)');
    const person = this.identity.policy.personOf(claims);
    if (!person.roles.includes(this.identity.role))
      return refused('NOT_AN_OPERATOR', `${person.identity}'s claims map to no ${this.identity.role} role`);
    if (person.tenants.length === 0) return refused('NO_TENANT', `${person.identity}'s claims map to no tenant`);
    return {
      ok: true,
      operator: { issuer: person.issuer, subject: person.subject, name: person.name, identity: person.identity, tenants: person.tenants },
    };
  }
}
