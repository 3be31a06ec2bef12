import { randomUUID } from 'node:crypto';
import type { IHeaders } from 'kafkajs';
import type { CallResult } from '@gatehouse/client';
import { canonicalArguments } from '@gatehouse/contracts';
import { DeadLetters, EventPublisher, startEventConsumer, toStoredOutcome } from '@gatehouse/events';
import type { EventByRole, ExecutionOrder, ToolResult, TopicRole } from '@gatehouse/events';
import { commandClaimKey } from '@gatehouse/executor';
import { ApprovalStore, ClaimLedger, ProposalStore } from '@gatehouse/state';
import type { Run } from '@gatehouse/state';
import type { Gatehouse } from './gatehouse.js';
import { logger } from './stack.js';

export async function currentVersion(g: Gatehouse, customerId = 'C-1842'): Promise<number> {
  const { rows } = await g.customers.db.query<{ version: number }>(`select version from ${g.customers.t.customers} where id = $1`, [
    customerId,
  ]);
  return Number(rows[0]?.version);
}

export async function shippingLine1(g: Gatehouse, customerId = 'C-1842'): Promise<string> {
  const { rows } = await g.customers.db.query<{ line1: string }>(`select line1 from ${g.customers.t.customers} where id = $1`, [
    customerId,
  ]);
  return rows[0]?.line1 ?? '';
}

/** Previews a move of C-1842 to a new street and returns the proposal id. */
export async function preview(g: Gatehouse, run: Run, line1: string, customerId = 'C-1842'): Promise<string> {
  const result = await g.client.call(
    'preview_address_change.v1',
    { customer_id: customerId, destination: { kind: 'new', line1, city: 'York', country: 'GB' } },
    { runId: run.run_id, tenant: run.tenant },
  );
  if (!result.ok) throw new Error(`preview refused: ${result.error.code} ${result.error.message}`);
  return (result.result as { proposal_id: string }).proposal_id;
}

export function commit(g: Gatehouse, run: Run, proposalId: string, options: { timeoutMs?: number } = {}): Promise<CallResult> {
  return g.client.call('commit_address_change.v2', { proposal_id: proposalId }, { runId: run.run_id, tenant: run.tenant, ...options });
}

/** Arms customers-service faults for the next writes (CUSTOMERS_FAULTS mode). */
export async function armFaults(g: Gatehouse, body: { nextWrites?: string[]; statusDown?: boolean; writeDelayMs?: number }): Promise<void> {
  const response = await fetch(`${g.customers.url}/__faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`arming faults failed: ${response.status} ${await response.text()}`);
}

/** Collects every event published on one of the Gatehouse's topics from now on. */
export async function collect<R extends TopicRole>(
  g: Gatehouse,
  role: R,
): Promise<{ events: EventByRole[R][]; headersOf(event: EventByRole[R]): IHeaders | undefined; stop(): Promise<void> }> {
  const events: EventByRole[R][] = [];
  const headers = new WeakMap<object, IHeaders | undefined>();
  const publisher = await EventPublisher.connect(g.kafka, g.serde);
  const running = await startEventConsumer({
    kafka: g.kafka,
    serde: g.serde,
    role,
    groupId: `${g.label}-collect-${role}-${randomUUID()}`,
    fromBeginning: true,
    deadLetters: new DeadLetters(publisher),
    logger,
    handle: (event, record) => {
      headers.set(event, record.headers);
      events.push(event);
      return Promise.resolve();
    },
  });
  await running.joined;
  return {
    events,
    headersOf: (event) => headers.get(event),
    stop: async () => {
      await running.stop();
      await publisher.disconnect();
    },
  };
}

/**
 * An approved ExecutionOrder made the way the approval service makes one: a stored proposal, an
 * approval record by a support lead, and the order naming both. For tests that publish orders directly.
 */
export async function approvedOrder(g: Gatehouse, run: Run, args: unknown, version: number): Promise<ExecutionOrder> {
  const now = Date.now();
  const { canonical, sha256 } = canonicalArguments(args);
  const proposalId = `p_${randomUUID().replace(/-/g, '')}`;
  await new ProposalStore(g.redis, g.keys).save({
    proposal_id: proposalId,
    tool: 'commit_address_change.v2',
    arguments: canonical,
    arguments_sha256: sha256,
    target: { type: 'customer', id: 'C-1842', version },
    effect: 'test change',
    diff: { changes: [], recipients: [], amount: null, affected_records: 1, irreversible: [] },
    environment: run.environment,
    run_id: run.run_id,
    tenant: run.tenant,
    principal: run.principal,
    created_at: now,
    expires_at: now + 600_000,
  });
  const approvalId = `apr_${randomUUID().replace(/-/g, '')}`;
  await new ApprovalStore(g.redis, g.keys).save({
    approval_id: approvalId,
    proposal_id: proposalId,
    arguments_sha256: sha256,
    target_type: 'customer',
    target_id: 'C-1842',
    target_version: version,
    approved_by: 'lead@acme.example',
    approver_roles: ['support-lead'],
    required_role: 'support-lead',
    approved_at: now,
    expires_at: now + 600_000,
  });
  return {
    schema_version: 1,
    order_id: randomUUID(),
    command_id: `cmd-${randomUUID()}`,
    run_id: run.run_id,
    tenant: run.tenant,
    principal: run.principal,
    environment: run.environment,
    tool: 'commit_address_change.v2',
    effect: 'write',
    arguments: canonical,
    arguments_sha256: sha256,
    proposal_id: proposalId,
    approval: {
      approval_id: approvalId,
      approved_by: 'lead@acme.example',
      approved_at: now,
      expires_at: now + 600_000,
      arguments_sha256: sha256,
      target_version: version,
    },
    idempotency_key: `${run.run_id}:${proposalId}:commit`,
    deadline_at: now + 600_000,
    issued_at: now,
  };
}

/** The ok answer of a move of C-1842's address from version `before`, as its executor would have staged it. */
export function stagedMoveAnswer(order: ExecutionOrder, before: number, operationId: string): ToolResult {
  return {
    schema_version: 1,
    command_id: order.command_id,
    run_id: order.run_id,
    tenant: order.tenant,
    tool: order.tool,
    status: 'ok',
    operation_id: operationId,
    result: JSON.stringify({
      customer_id: 'C-1842',
      previous_version: before,
      new_version: before + 1,
      changed_fields: ['shipping_address'],
      committed_at: '2026-11-30T00:00:00.000Z',
    }),
    error: null,
    pending: null,
    arguments_sha256: order.arguments_sha256,
    completed_at: Date.now(),
    duration_ms: 12,
  };
}

/**
 * Leaves `order` as an executor `owner` that died after staging `answer` leaves it: its command's
 * claim and its write's key claimed with a lease already run out, `answer` staged on both. Answers
 * the answer as stored.
 */
export async function orphanStagedWrite(g: Gatehouse, order: ExecutionOrder, answer: ToolResult, owner: string): Promise<string> {
  const ledger = new ClaimLedger(g.redis, g.keys);
  const outcome = toStoredOutcome(answer, 'execute:0:0');
  const terms = { argumentsSha256: order.arguments_sha256, leaseMs: 1, commandId: order.command_id };
  for (const entry of [commandClaimKey(order.run_id, order.command_id), order.idempotency_key ?? '']) {
    const claimed = await ledger.claim(entry, order.arguments_sha256, owner, 1, order.command_id);
    if (claimed.kind !== 'claimed') throw new Error(`${entry} was not free to orphan: ${claimed.kind}`);
    if ((await ledger.stage(entry, owner, outcome, terms)) !== 'staged') throw new Error(`${entry} did not take the staged answer`);
  }
  return outcome;
}
