import { randomUUID } from 'node:crypto';
import { sha256Hex } from '@gatehouse/contracts';
import type { ExecutionContext } from '@gatehouse/contracts';
import type { ExecutionOrder, RecordHeaders, ResultAddress } from '@gatehouse/events';
import type { ClaimTerms } from '@gatehouse/state';
import { traceIdOf } from '@gatehouse/telemetry';

// What every path of an order (its command's claim, a read, a write) names alike, from the order alone.

/** Where an order's results go: its command, run, tenant and tool. */
export function addressOf(order: ExecutionOrder): ResultAddress {
  return { command_id: order.command_id, run_id: order.run_id, tenant: order.tenant, tool: order.tool };
}

/** The terms an order's ledger entries are claimed on (its command's claim and its write's key alike). */
export function termsOf(order: ExecutionOrder, leaseMs: number): ClaimTerms {
  return { argumentsSha256: order.arguments_sha256, leaseMs, commandId: order.command_id };
}

/** A write's operation id, derived from its idempotency key: every owner of the key names it alike. */
export function writeOperationId(idempotencyKey: string): string {
  return `op_${sha256Hex(idempotencyKey).slice(0, 24)}`;
}

/** What a handler of `order` knows about its call, but for its signal and credential (which each call path adds). */
export function orderContext(
  order: ExecutionOrder,
  operationId: string,
  idempotencyKey: string | null,
): Omit<ExecutionContext, 'signal' | 'credential'> {
  return {
    commandId: order.command_id,
    operationId,
    runId: order.run_id,
    tenant: order.tenant,
    principal: order.principal,
    environment: order.environment,
    idempotencyKey,
    deadlineAt: order.deadline_at,
  };
}

/** What every log line about an order names (never its arguments: their sha256). */
export function logContextOf(order: ExecutionOrder, headers: RecordHeaders | undefined): Readonly<Record<string, unknown>> {
  return {
    command_id: order.command_id,
    run_id: order.run_id,
    tenant: order.tenant,
    tool: order.tool,
    arguments_sha256: order.arguments_sha256,
    trace_id: traceIdOf(headers),
  };
}

/** A fresh owner token per delivery: two copies of an order in this very process must not both run. */
export function ownerToken(executorId: string): string {
  return `${executorId}/${randomUUID().replace(/-/g, '').slice(0, 16)}`;
}
