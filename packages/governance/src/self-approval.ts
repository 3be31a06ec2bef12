/** A person as the identity provider names them: what four eyes compare. */
export interface IdpIdentity {
  readonly issuer: string;
  readonly subject: string;
}

/**
 * The four-eyes rule, one implementation for the approval service and the executor: a person may not
 * decide on a proposal of a run that acts on their behalf. Only IdP identities are compared (issuer
 * and subject): a display name, an email or a principal string can be chosen or edited, so matching
 * them would both let a person through under another spelling and refuse a stranger who shares it.
 * A run that names no person has nobody to compare against.
 */
export function isSelfApproval(
  onBehalfOf: IdpIdentity | null | undefined,
  approver: { readonly issuer: string | null | undefined; readonly subject: string | null | undefined } | null | undefined,
): boolean {
  if (onBehalfOf === null || onBehalfOf === undefined || approver === null || approver === undefined) return false;
  return approver.issuer === onBehalfOf.issuer && approver.subject === onBehalfOf.subject;
}
