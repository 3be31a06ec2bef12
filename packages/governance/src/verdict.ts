import type { CanonicalArguments, ToolContract, ToolError } from '@gatehouse/contracts';
import type { BoundaryRun } from './boundary-ports.js';
import type { Proposal } from './proposal.js';

/** Refused: `error` goes back to the agent; the hash once the arguments had a canonical form. */
export interface Refusal {
  readonly kind: 'refuse';
  readonly error: ToolError;
  readonly argumentsSha256: string | null;
}

/** A read that passed every check: route its canonical arguments. */
export interface ReadVerdict {
  readonly kind: 'read';
  readonly run: BoundaryRun;
  readonly tool: ToolContract;
  readonly canonical: CanonicalArguments;
}

/**
 * A commit retried after its proposal was used and its operation finished: route it again with no
 * grant; the executor answers with the stored result, never a second write.
 */
export interface FinishedWriteVerdict {
  readonly kind: 'finished';
  readonly run: BoundaryRun;
  readonly tool: ToolContract;
  readonly proposal: Proposal;
  readonly idempotencyKey: string;
}

/** The policy table allows the write: grant it (until `grantExpiresAt`) and route it. */
export interface AllowedWriteVerdict {
  readonly kind: 'allow';
  readonly run: BoundaryRun;
  readonly tool: ToolContract;
  readonly proposal: Proposal;
  /** Made here from the arguments (no preview stored it): store it before anything names it. */
  readonly implicit: boolean;
  readonly idempotencyKey: string;
  readonly ruleId: string;
  readonly grantExpiresAt: number;
}

/** The policy table asks a person holding `approverRole`, until `expiresAt`. */
export interface ApprovalWriteVerdict {
  readonly kind: 'approval';
  readonly run: BoundaryRun;
  readonly tool: ToolContract;
  readonly proposal: Proposal;
  /** Made here from the arguments (no preview stored it): store it before anything names it. */
  readonly implicit: boolean;
  readonly ruleId: string;
  readonly approverRole: string;
  readonly expiresAt: number;
  /** Seconds within which the approver must have signed in at the IdP, when the rule asks for it. */
  readonly recentSignInS: number | null;
}

export type WriteVerdict = FinishedWriteVerdict | AllowedWriteVerdict | ApprovalWriteVerdict;

/** What the boundary concluded about one call. Acting on it (storing, publishing) is the caller's. */
export type CallVerdict = Refusal | ReadVerdict | WriteVerdict;

export const refusal = (error: ToolError, argumentsSha256: string | null = null): Refusal => ({ kind: 'refuse', error, argumentsSha256 });
