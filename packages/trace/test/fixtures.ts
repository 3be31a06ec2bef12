// A recorded run built from events by hand (the same events the services publish), and catalogs
// changed the two ways the issue names: an optional field in a new version, a field made required
// in place.
import { Catalog, defineTool } from '@gatehouse/contracts';
import type { ToolContract } from '@gatehouse/contracts';
import { addressOf, errorResult, okResult, pendingResult } from '@gatehouse/events';
import type { ApprovalDecision, ApprovalRequest, ExecutionOrder, ToolCommand, ToolResult } from '@gatehouse/events';
import { getCustomer, customerSupportImplementations } from '@gatehouse/example-customer-support';
import type { RunEvents } from '@gatehouse/trace';

export const RUN = 'run-trace-fixture';
const referenceTools = (): ToolContract[] => customerSupportImplementations.map((i) => i.contract);

/** Values a trace must never contain. */
export const SECRETS = ['Quarterly refund', 'Your card ending 4242 was refunded', 'Bob the secret', 'Marta Kowalska', 'marta@example.com'];

let clock = 1_700_000_000_000;
const tick = (): number => (clock += 10);

function command(id: string, tool: string, args: unknown): ToolCommand {
  const sentAt = tick();
  return {
    schema_version: 1,
    command_id: id,
    run_id: RUN,
    tenant: 'acme',
    tool,
    arguments: JSON.stringify(args),
    sent_at: sentAt,
    deadline_at: sentAt + 30_000,
  };
}

function order(c: ToolCommand, effect: 'read' | 'write', approvedBy: string | null): ExecutionOrder {
  return {
    schema_version: 1,
    order_id: `o-${c.command_id}`,
    command_id: c.command_id,
    run_id: RUN,
    tenant: 'acme',
    principal: 'agent:bot',
    environment: 'sandbox',
    tool: c.tool,
    effect,
    arguments: c.arguments,
    arguments_sha256: 'sha',
    proposal_id: null,
    approval:
      approvedBy === null
        ? null
        : {
            approval_id: 'apr_1',
            approved_by: approvedBy,
            approved_at: tick(),
            expires_at: tick() + 60_000,
            arguments_sha256: 'sha',
            target_version: null,
          },
    idempotency_key: null,
    deadline_at: null,
    issued_at: tick(),
  };
}

const ok = (c: ToolCommand, view: unknown): ToolResult => okResult(addressOf(c), JSON.stringify(view), { completedAt: tick() });

/** A read, a refused read, a preview with free text, and an approved write, of one run. */
export function fixtureEvents(): RunEvents {
  const read = command('c1-read', 'get_customer.v1', { customer_id: 'C-1842' });
  const unknown = command('c2-unknown-field', 'get_customer.v1', { customer_id: 'C-1842', nickname: 'Bob the secret' });
  const preview = command('c3-preview', 'preview_customer_email.v1', {
    customer_id: 'C-1842',
    subject: 'Quarterly refund',
    body: 'Your card ending 4242 was refunded',
  });
  const send = command('c4-send', 'send_customer_email.v1', { proposal_id: 'p_abcdefgh12' });
  const other = { ...command('c9-other-run', 'get_customer.v1', { customer_id: 'C-7' }), run_id: 'someone-else' };
  const request: ApprovalRequest = {
    schema_version: 1,
    proposal_id: 'p_abcdefgh12',
    command_id: send.command_id,
    run_id: RUN,
    tenant: 'acme',
    principal: 'agent:bot',
    environment: 'sandbox',
    tool: send.tool,
    arguments: '{"body":"Your card ending 4242 was refunded"}',
    arguments_sha256: 'sha',
    target: { type: 'customer', id: 'C-1842', version: null },
    effect: 'Send an email “Quarterly refund” to marta@example.com',
    diff: { changes: [], recipients: ['marta@example.com'], amount: null, affected_records: 1, irreversible: ['delivered for good'] },
    approver_role: 'support-lead',
    rule_id: 'customer-email-support-lead',
    requested_at: tick(),
    expires_at: tick() + 60_000,
  };
  const decision: ApprovalDecision = {
    schema_version: 1,
    decision_id: 'd1',
    proposal_id: request.proposal_id,
    command_id: send.command_id,
    run_id: RUN,
    tenant: 'acme',
    tool: send.tool,
    decision: 'approved',
    decided_by: 'lead@acme',
    decided_at: tick(),
    reason: null,
    arguments_sha256: 'sha',
    target_type: 'customer',
    target_id: 'C-1842',
    target_version: null,
    approval_expires_at: tick() + 60_000,
  };
  return {
    commands: [read, unknown, preview, send, other],
    orders: [order(read, 'read', null), order(preview, 'read', null), order(send, 'write', 'lead@acme')],
    approvalsRequested: [request],
    approvalsDecided: [decision],
    results: [
      ok(read, { name: 'Marta Kowalska', email: 'marta@example.com', customer_id: 'C-1842', version: 17 }),
      errorResult(
        addressOf(unknown),
        { code: 'INVALID_ARGUMENT', message: 'unknown field', retryable: false, field: '/nickname' },
        { completedAt: tick() },
      ),
      ok(preview, { proposal_id: 'p_abcdefgh12', subject: 'Quarterly refund', recipient: 'marta@example.com' }),
      pendingResult(
        addressOf(send),
        { proposal_id: request.proposal_id, approver_role: 'support-lead', expires_at: tick() },
        { completedAt: tick() },
      ),
      ok(send, { message_id: 'm-1', recipient: 'marta@example.com', sent_at: '2026-01-01T00:00:00Z' }),
    ],
  };
}

const includeOrders = { type: 'boolean', description: 'Also count open orders.' } as const;

/** get_customer gains a v2 with one more OPTIONAL field; v1 is untouched. */
export function catalogWithOptionalFieldV2(): Catalog {
  const v2 = defineTool({
    ...getCustomer,
    version: 2,
    input: { ...getCustomer.input, properties: { ...getCustomer.input.properties, include_orders: includeOrders } },
  });
  return Catalog.load([...referenceTools(), v2]);
}

/** get_customer.v1 itself is changed in place: a new field, REQUIRED. */
export function catalogWithRequiredFieldInPlace(): Catalog {
  const changed = defineTool({
    ...getCustomer,
    input: {
      ...getCustomer.input,
      required: ['customer_id', 'include_orders'],
      properties: { ...getCustomer.input.properties, include_orders: includeOrders },
    },
  });
  return Catalog.load(referenceTools().map((t) => (t.address === changed.address ? changed : t)));
}

/** get_customer.v1 turned into a write (with a rule, so the catalog loads). */
export function catalogWithReadTurnedWrite(): Catalog {
  const changed = defineTool({ ...getCustomer, effect: 'write', retry: 'idempotent', approval: 'customer-read' });
  return Catalog.load(referenceTools().map((t) => (t.address === changed.address ? changed : t)));
}
