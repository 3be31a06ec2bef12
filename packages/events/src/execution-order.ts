import type { Effect } from '@gatehouse/contracts';
import type { ApprovalGrant, EpochMillis, ExecutionOrder, Person } from './event-types.js';

/** The run an order executes under, as the ordering service knows it. */
export interface OrderRun {
  readonly run_id: string;
  readonly tenant: string;
  readonly principal: string;
  readonly environment: string;
  readonly on_behalf_of?: Person | null | undefined;
}

/** What a write's order carries beside a read's: its proposal, the approval it runs under, and its key. */
export interface OrderedWrite {
  readonly proposalId: string;
  readonly approval: ApprovalGrant | null;
  readonly idempotencyKey: string;
}

export interface OrderParts {
  readonly orderId: string;
  readonly commandId: string;
  readonly run: OrderRun;
  readonly tool: string;
  readonly effect: Effect;
  /** The canonical arguments and their sha256. */
  readonly arguments: string;
  readonly argumentsSha256: string;
  /** Absent for a read. */
  readonly write?: OrderedWrite | undefined;
  /** Every deadline the order must keep (the run's end, the grant's, the call's own); the earliest is its deadline. */
  readonly deadlines: readonly (EpochMillis | null | undefined)[];
  readonly issuedAt: EpochMillis;
  /** The sha256 of the tool version's contract as the ordering service holds it; null when it holds none. */
  readonly contractSha256: string | null;
}

/**
 * The one way an ExecutionOrder is made, by the policy service (a read, or a write it grants) and
 * the approval service (a write a person approved) alike. No stage extends a deadline: the order's
 * is the earliest it was given, or none.
 */
export function executionOrder(parts: OrderParts): ExecutionOrder {
  const deadlines = parts.deadlines.filter((d): d is EpochMillis => d !== null && d !== undefined);
  return {
    schema_version: 1,
    order_id: parts.orderId,
    command_id: parts.commandId,
    run_id: parts.run.run_id,
    tenant: parts.run.tenant,
    principal: parts.run.principal,
    environment: parts.run.environment,
    tool: parts.tool,
    effect: parts.effect,
    arguments: parts.arguments,
    arguments_sha256: parts.argumentsSha256,
    proposal_id: parts.write?.proposalId ?? null,
    approval: parts.write?.approval ?? null,
    idempotency_key: parts.write?.idempotencyKey ?? null,
    deadline_at: deadlines.length === 0 ? null : Math.min(...deadlines),
    issued_at: parts.issuedAt,
    on_behalf_of: parts.run.on_behalf_of ?? null,
    contract_sha256: parts.contractSha256,
  };
}
