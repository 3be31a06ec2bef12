import type { DecisionStatus } from './trace-format.js';

/** What a replayed call came to. `accepted`: it passes the boundary; the policy table was not re-run. */
export type ReplayStatus = DecisionStatus | 'accepted';

export interface ReplayDecision {
  readonly status: ReplayStatus;
  readonly code?: string;
  readonly field?: string;
  /** The approver role of a `pending_approval`. */
  readonly role?: string;
}

export interface ReplayCall {
  readonly command_id: string;
  readonly tool: string;
  readonly before: ReplayDecision;
  readonly after: ReplayDecision;
  readonly differs: boolean;
  /** Why the call differs, or how it was re-driven when it does not. */
  readonly why: string;
}

export interface ReplayInvariant {
  readonly name: string;
  readonly holds: boolean;
  readonly detail: string;
}

export interface ReplayReport {
  readonly catalogChanged: boolean;
  /** SHA-256 of the recorded and the current catalog (see catalogFingerprint). */
  readonly catalog: { readonly recorded: string; readonly current: string };
  readonly calls: readonly ReplayCall[];
  /** How many calls differ. */
  readonly differences: number;
  readonly invariants: readonly ReplayInvariant[];
}

/** Routed, waiting for a person, or past the boundary: an effect the run was allowed. */
export const isAccepted = (status: ReplayStatus): boolean => status === 'routed' || status === 'pending_approval' || status === 'accepted';

export function describeDecision(d: ReplayDecision): string {
  if (d.status === 'refused') return `refused ${d.code ?? ''}${d.field === undefined ? '' : ` ${d.field}`}`.trim();
  if (d.status === 'pending_approval' && d.role !== undefined) return `pending_approval (${d.role})`;
  return d.status;
}
