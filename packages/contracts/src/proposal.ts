/** The person a run acts for: issuer and subject at the company's IdP, and a name to show. */
export interface ProposalPerson {
  readonly issuer: string;
  readonly subject: string;
  readonly name: string | null;
}

/**
 * A canonical proposal: exactly what a person approves and exactly what a commit runs. Built by
 * `buildProposal` (@gatehouse/governance) from a preview's draft, stored by `ProposalStore`
 * (@gatehouse/state), one shape for both.
 */
export interface Proposal {
  readonly proposal_id: string;
  /** The commit tool (name.vN) the proposal is for. */
  readonly tool: string;
  /** RFC 8785 canonical JSON of the commit's arguments. */
  readonly arguments: string;
  readonly arguments_sha256: string;
  readonly target: { readonly type: string; readonly id: string; readonly version: number | null };
  readonly effect: string;
  readonly diff: {
    readonly changes: readonly { readonly field: string; readonly before: string | null; readonly after: string | null }[];
    readonly recipients: readonly string[];
    readonly amount: { readonly minor: number; readonly currency: string } | null;
    readonly affected_records: number;
    readonly irreversible: readonly string[];
  };
  readonly environment: string;
  readonly run_id: string;
  readonly tenant: string;
  readonly principal: string;
  /** The person whose agent made the proposal; they may not approve it. Absent on older proposals. */
  readonly on_behalf_of?: ProposalPerson | null;
  readonly created_at: number;
  readonly expires_at: number;
}
