import { randomUUID } from 'node:crypto';
import { contractSha256, toolError } from '@gatehouse/contracts';
import { checkCall } from '@gatehouse/governance';
import type { BoundaryDeps, ReadVerdict, Refusal } from '@gatehouse/governance';
import { executionOrder } from '@gatehouse/events';
import type { ExecutionOrder, ToolCommand } from '@gatehouse/events';
import type { ProposalStore } from '@gatehouse/state';
import { decideWrite } from './write-decision.js';
import type { WriteDecision, WriteDeps } from './write-decision.js';

/** What the policy service does with one command. */
export type Decision = Refusal | WriteDecision;

export interface DecideDeps extends BoundaryDeps, WriteDeps {
  readonly proposals: ProposalStore;
  readonly now?: () => number;
}

/**
 * decide: the boundary's ordered checks (@gatehouse/governance `checkCall`), then what the verdict
 * causes here — an execution order, or a write's grant or approval request.
 */
export async function decide(command: ToolCommand, deps: DecideDeps): Promise<Decision> {
  const now = deps.now?.() ?? Date.now();
  // No work starts after the call's deadline: not a check of the call, and not an order.
  if (command.deadline_at !== null && command.deadline_at <= now) {
    const error = toolError('TIMEOUT', 'The call’s deadline passed before it reached the boundary; nothing ran', { retryable: false });
    return { kind: 'refuse', error, argumentsSha256: null };
  }
  const verdict = await checkCall(command, deps, now);
  if (verdict.kind === 'refuse') return verdict;
  if (verdict.kind === 'read') return { kind: 'execute', order: readOrder(command, verdict, now) };
  return decideWrite(command, verdict, deps, now);
}

function readOrder(command: ToolCommand, { run, tool, canonical }: ReadVerdict, now: number): ExecutionOrder {
  return executionOrder({
    orderId: randomUUID(),
    commandId: command.command_id,
    run,
    tool: tool.address,
    effect: tool.effect,
    arguments: canonical.canonical,
    argumentsSha256: canonical.sha256,
    deadlines: [run.expires_at, command.deadline_at],
    issuedAt: now,
    contractSha256: contractSha256(tool),
  });
}
