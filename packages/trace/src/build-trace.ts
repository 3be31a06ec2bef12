import { canonicalArguments } from '@gatehouse/contracts';
import type { Catalog } from '@gatehouse/contracts';
import type { ApprovalDecision, ApprovalRequest, ExecutionOrder, ToolCommand, ToolResult } from '@gatehouse/events';
import { catalogFingerprint } from './catalog-fingerprint.js';
import { redactArguments } from './redact-arguments.js';
import { TraceError } from './trace-error.js';
import { TRACE_FORMAT } from './trace-format.js';
import type { Trace, TraceApproval, TraceCall, TraceDecision, TracePolicy, TraceResult } from './trace-format.js';

/** The events of a run as read from its topics (events of other runs are ignored). */
export interface RunEvents {
  readonly commands: readonly ToolCommand[];
  readonly results: readonly ToolResult[];
  readonly approvalsRequested: readonly ApprovalRequest[];
  readonly approvalsDecided: readonly ApprovalDecision[];
  readonly orders: readonly ExecutionOrder[];
}

export interface BuildTraceOptions {
  readonly runId: string;
  /** The catalog the run was served by: its schemas guide redaction, its fingerprint is recorded. */
  readonly catalog: Catalog;
  readonly events: RunEvents;
  readonly recordedAt?: Date;
}

function byCommand<T extends { readonly command_id: string }>(events: readonly T[]): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const event of events) {
    const list = map.get(event.command_id);
    if (list === undefined) map.set(event.command_id, [event]);
    else list.push(event);
  }
  return map;
}

interface Parsed {
  readonly json: boolean;
  readonly value: unknown;
  readonly sha256: string | null;
}

function parseArguments(text: string): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return { json: false, value: null, sha256: null };
  }
  try {
    return { json: true, value, sha256: canonicalArguments(value).sha256 };
  } catch {
    return { json: true, value, sha256: null };
  }
}

function decisionOf(
  requests: readonly ApprovalRequest[],
  orders: readonly ExecutionOrder[],
  results: readonly ToolResult[],
): TraceDecision {
  if (requests.length > 0) return { status: 'pending_approval' };
  if (orders.length > 0) return { status: 'routed' };
  const refusal = results.find((r) => r.status === 'error' && r.error !== null);
  if (refusal?.error == null) return { status: 'undecided' };
  return { status: 'refused', code: refusal.error.code, ...(refusal.error.field === null ? {} : { field: refusal.error.field }) };
}

function approvalOf(request: ApprovalRequest | undefined, decisions: readonly ApprovalDecision[]): TraceApproval | undefined {
  if (request === undefined) return undefined;
  const decided = decisions.find((d) => d.proposal_id === request.proposal_id) ?? decisions[0];
  const person = request.on_behalf_of ?? null;
  return {
    decision: decided?.decision ?? 'pending',
    role: request.approver_role,
    rule: request.rule_id,
    on_behalf_of: person === null ? null : { issuer: person.issuer, subject: person.subject },
  };
}

function policyOf(request: ApprovalRequest | undefined, order: ExecutionOrder | undefined): TracePolicy | undefined {
  if (request !== undefined) {
    const { diff } = request;
    return {
      environment: request.environment,
      rule: request.rule_id,
      scope: {
        affected_records: diff.affected_records,
        amount: diff.amount === null ? null : { minor: diff.amount.minor, currency: diff.amount.currency },
        recipients: diff.recipients.length,
        irreversible: diff.irreversible.length,
      },
    };
  }
  if (order?.effect !== 'write') return undefined;
  const by = order.approval?.approved_by ?? '';
  return { environment: order.environment, rule: by.startsWith('policy:') ? by.slice('policy:'.length) : null };
}

/** The terminal result: status, code and the view's field names, never a value. */
function resultOf(results: readonly ToolResult[]): TraceResult {
  const ordered = [...results].sort((a, b) => a.completed_at - b.completed_at);
  const final = ordered.filter((r) => r.status !== 'pending_approval').at(-1);
  if (final === undefined) return { status: ordered.length > 0 ? 'pending_approval' : 'none' };
  if (final.status === 'ok') {
    let fields: string[] | undefined;
    try {
      const view = JSON.parse(final.result ?? 'null') as unknown;
      if (typeof view === 'object' && view !== null && !Array.isArray(view)) fields = Object.keys(view).sort();
    } catch {
      fields = undefined;
    }
    return { status: 'ok', ...(fields === undefined ? {} : { fields }) };
  }
  return { status: final.status, ...(final.error === null ? {} : { code: final.error.code }) };
}

/**
 * Builds the redacted trace of one run from its events: one call per command (first occurrence,
 * in the order sent), with the boundary's decision, the approval, the policy facts of a write and
 * the result's shape. Pure: reading the topics is `recordTrace`'s job.
 */
export function buildTrace(options: BuildTraceOptions): Trace {
  const { runId, catalog } = options;
  const mine = <T extends { readonly run_id: string }>(events: readonly T[]): T[] => events.filter((e) => e.run_id === runId);
  const commands = mine(options.events.commands);
  const first = commands[0];
  if (first === undefined) throw new TraceError('RUN_NOT_FOUND', `no command of run ${runId} is on the commands topic`);
  const results = byCommand(mine(options.events.results));
  const requests = byCommand(mine(options.events.approvalsRequested));
  const decisions = byCommand(mine(options.events.approvalsDecided));
  const orders = byCommand(mine(options.events.orders));

  const seen = new Set<string>();
  const calls: TraceCall[] = [];
  for (const command of [...commands].sort((a, b) => a.sent_at - b.sent_at)) {
    if (seen.has(command.command_id)) continue;
    seen.add(command.command_id);
    const id = command.command_id;
    const parsed = parseArguments(command.arguments);
    const tool = catalog.get(command.tool);
    const request = requests.get(id)?.[0];
    const approval = approvalOf(request, decisions.get(id) ?? []);
    const policy = policyOf(request, orders.get(id)?.[0]);
    calls.push({
      command_id: id,
      tool: command.tool,
      arguments: parsed.json ? redactArguments(tool?.input, parsed.value) : null,
      arguments_json: parsed.json,
      arguments_sha256: parsed.sha256,
      decision: decisionOf(requests.get(id) ?? [], orders.get(id) ?? [], results.get(id) ?? []),
      ...(approval === undefined ? {} : { approval }),
      ...(policy === undefined ? {} : { policy }),
      result: resultOf(results.get(id) ?? []),
    });
  }
  return {
    format: TRACE_FORMAT,
    recorded_at: (options.recordedAt ?? new Date()).toISOString(),
    run: { run_id: runId, tenant: first.tenant },
    catalog: catalogFingerprint(catalog),
    calls,
  };
}
