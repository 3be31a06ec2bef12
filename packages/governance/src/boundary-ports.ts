import type { Catalog } from '@gatehouse/contracts';
import type { PolicyTable } from './policy-table.js';
import type { Proposal } from './proposal.js';

/** The fields of a command the boundary reads; `ToolCommand` of @gatehouse/events fits. */
export interface BoundaryCommand {
  readonly command_id: string;
  readonly run_id: string;
  readonly tenant: string;
  /** The address the agent asked for, unchecked (`name.vN`). */
  readonly tool: string;
  /** The agent's arguments: JSON text, not yet parsed. */
  readonly arguments: string;
}

/** A run as trusted code registered it; `Run` of @gatehouse/state fits. */
export interface BoundaryRun {
  readonly run_id: string;
  readonly tenant: string;
  readonly principal: string;
  /** The person whose agent the run is, when it names one. */
  readonly on_behalf_of?: { readonly issuer: string; readonly subject: string; readonly name: string | null } | null;
  readonly role: string;
  /** Tool addresses (name.vN) the run may call. */
  readonly capabilities: readonly string[];
  readonly environment: string;
  readonly expires_at: number;
  readonly stopped_at: number | null;
}

/** Port: runs by id, whatever their state (`RunRegistry`). */
export interface RunLookup {
  get(runId: string): Promise<BoundaryRun | undefined>;
}

export type RateTake = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterMs: number };

/** Port: the shared rate limit windows (`RateLimiter`); `callId` makes a redelivered call keep its answer. */
export interface RateLimiterPort {
  take(tool: string, scope: string, limit: { readonly limit: number; readonly windowMs: number }, callId: string): Promise<RateTake>;
}

/** Port: stored proposals by id (`ProposalStore`). */
export interface ProposalLookup {
  get(proposalId: string): Promise<{ readonly proposal: Proposal; readonly state: 'open' | 'consumed' } | undefined>;
}

/** Port: idempotency records by key (`ClaimLedger`); only whether the operation is still in flight matters. */
export interface IdempotencyLookup {
  get(key: string): Promise<{ readonly state: string } | undefined>;
}

/** What the boundary decides with: the ports, the catalog and table, and the limits. Built once per service. */
export interface BoundaryDeps {
  readonly catalog: Catalog;
  readonly table: PolicyTable;
  readonly runs: RunLookup;
  readonly limiter: RateLimiterPort;
  readonly proposals: ProposalLookup;
  readonly idempotency: IdempotencyLookup;
  /** Largest `arguments` text accepted, in UTF-8 bytes. */
  readonly maxArgumentBytes: number;
  /** Roles whose runs may call a tool, to tell a denied run which path would serve (see `rolesGranting`). */
  readonly rolesGranting?: (address: string) => readonly string[];
  /** How long a policy `allow` grant stays usable. */
  readonly grantValidityMs: number;
  /** How long an implicit proposal (of a write that is not a preview/commit pair) lives. */
  readonly proposalTtlMs: number;
}
