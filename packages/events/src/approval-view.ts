import type { Decider, Target } from './event-types.js';

/** Where an approval request stands; every state but `pending` is final. */
export const ApprovalState = { pending: 'pending', approved: 'approved', rejected: 'rejected', expired: 'expired' } as const;
export type ApprovalState = (typeof ApprovalState)[keyof typeof ApprovalState];

/**
 * One request as the approval service's API lists it: enough to pick it, nothing of its arguments.
 * The service answers with it and the CLI reads it.
 */
export interface RequestSummary {
  readonly proposal_id: string;
  readonly state: ApprovalState;
  readonly tenant: string;
  readonly tool: string;
  readonly environment: string;
  readonly target: Target;
  readonly effect: string;
  readonly approver_role: string;
  readonly arguments_sha256: string;
  readonly requested_at: number;
  readonly expires_at: number;
  /** Milliseconds until the request lapses, by the database's clock; 0 once it has. */
  readonly time_left_ms: number;
  readonly server_now: number;
  /** Whether the caller holds the authority to decide (role, not the run's own principal). */
  readonly may_decide: boolean;
  /** Why not, as an error code, when `may_decide` is false for reasons of authority. */
  readonly may_not_because: string | null;
  /** Seconds within which an approver must have signed in (a step-up rule), or null. */
  readonly recent_sign_in_s: number | null;
  /** True when approving now would first send the caller back to the IdP to sign in again. */
  readonly sign_in_again: boolean;
  readonly decided_by: string | null;
  /** The deciding person's issuer, subject, display name and time of sign-in. */
  readonly decider: Decider | null;
  readonly decided_at: number | null;
  readonly reason: string | null;
  readonly approval_id: string | null;
  readonly approval_expires_at: number | null;
}
