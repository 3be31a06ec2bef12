import type { Catalog, ToolContract } from '@gatehouse/contracts';
import { catalogFingerprint } from './catalog-fingerprint.js';
import { checkInvariants } from './invariants.js';
import { isAccepted } from './replay-types.js';
import type { ReplayCall, ReplayDecision, ReplayReport } from './replay-types.js';
import type { Trace, TraceCall, TraceTool } from './trace-format.js';

/** The facts a policy table decides a write on; `PolicyTable` of @gatehouse/policy fits. */
export interface ReplayPolicySubject {
  readonly tool: ToolContract;
  readonly environment: string;
  readonly affectedRecords: number;
  readonly amount: { readonly minor: number; readonly currency: string } | null;
  readonly recipients: readonly string[];
  readonly irreversible: readonly string[];
}

export interface ReplayPolicyTable {
  evaluate(subject: ReplayPolicySubject): {
    readonly ruleId: string;
    readonly decision:
      | { readonly kind: 'allow' }
      | { readonly kind: 'require_approval'; readonly approverRole: string }
      | { readonly kind: 'deny' };
  };
}

export interface ReplayOptions {
  /** Re-decide writes with this table; without it, the recorded policy outcome of a write is kept. */
  readonly policyTable?: ReplayPolicyTable;
  /** Environment of writes whose trace does not name one (default: none, the table is not run). */
  readonly environment?: string;
}

/** Where in the boundary a recorded refusal happened: 0 run, 1 lookup, 2 grant/size, 3 schema, 4 after. */
function stageOf(code: string | undefined, field: string | undefined): number {
  switch (code) {
    case 'RUN_NOT_FOUND':
    case 'TENANT_MISMATCH':
      return 0;
    case 'TOOL_NOT_FOUND':
      return 1;
    case 'CAPABILITY_DENIED':
      return field === '/proposal_id' ? 4 : 2; // a proposal of another run is refused after validation
    case 'TOOL_VERSION_RETIRED':
    case 'PAYLOAD_TOO_LARGE':
      return 2;
    case 'INVALID_ARGUMENT':
      return 3;
    default:
      return 4;
  }
}

function before(call: TraceCall): ReplayDecision {
  const { status, code, field } = call.decision;
  const role = status === 'pending_approval' ? call.approval?.role : undefined;
  return { status, ...(code === undefined ? {} : { code }), ...(field === undefined ? {} : { field }), ...(role === undefined ? {} : { role }) };
}

const refused = (code: string, field?: string): ReplayDecision => ({ status: 'refused', code, ...(field === undefined || field === '' ? {} : { field }) });

/**
 * A write routed under no rule went ahead on a grant the run already held (a commit retried after
 * its proposal was approved): the table cannot judge that again from the trace, so the recorded
 * routing stands.
 */
const routedOnExistingGrant = (call: TraceCall): boolean => call.decision.status === 'routed' && call.policy !== undefined && call.policy.rule === null;

function decidePolicy(call: TraceCall, tool: ToolContract, options: ReplayOptions): ReplayDecision | undefined {
  const environment = call.policy?.environment ?? options.environment;
  if (options.policyTable === undefined || tool.effect !== 'write' || environment === undefined || routedOnExistingGrant(call)) return undefined;
  const scope = call.policy?.scope;
  const { decision } = options.policyTable.evaluate({
    tool,
    environment,
    affectedRecords: scope?.affected_records ?? 1,
    amount: scope?.amount ?? null,
    recipients: Array.from({ length: scope?.recipients ?? 0 }, () => 'recipient'),
    irreversible: Array.from({ length: scope?.irreversible ?? 0 }, () => 'consequence'),
  });
  if (decision.kind === 'allow') return { status: 'routed' };
  if (decision.kind === 'require_approval') return { status: 'pending_approval', role: decision.approverRole };
  return refused('POLICY_DENIED');
}

/** The decision the current catalog (and table) would give the call, with how it was reached. */
function redrive(call: TraceCall, was: ReplayDecision, recorded: TraceTool | undefined, catalog: Catalog, options: ReplayOptions): { after: ReplayDecision; how: string } {
  const stage = was.status === 'refused' ? stageOf(was.code, was.field) : 5;
  if (stage === 0) return { after: was, how: 'run-level refusal, carried over' };
  const found = catalog.lookup(call.tool);
  if (!found.ok) return { after: refused(found.error.code), how: 'tool lookup' };
  if (found.retired && recorded?.retired !== true) return { after: refused('TOOL_VERSION_RETIRED'), how: `retired since the recording; live: ${found.live ?? 'none'}` };
  if (stage === 2) return { after: was, how: 'grant or size refusal, carried over' };
  if (!call.arguments_json) return { after: refused('INVALID_ARGUMENT'), how: 'arguments are not JSON' };
  const valid = catalog.validateInput(found.tool, call.arguments);
  if (!valid.ok) return { after: refused(valid.error.code, valid.error.field ?? undefined), how: 'schema validation' };
  const policy = decidePolicy(call, found.tool, options);
  if (policy !== undefined && (stage === 5 || stage === 3 || was.code === 'POLICY_DENIED') && was.status !== 'undecided') {
    return { after: policy, how: 'schema validation, policy table' };
  }
  if (stage === 4) return { after: was, how: 'schema validation; stateful refusal carried over' };
  if (stage === 5 && was.status !== 'undecided') {
    return { after: was, how: routedOnExistingGrant(call) ? 'schema validation; routed on an existing approval, kept' : 'schema validation; recorded routing kept' };
  }
  return { after: { status: found.tool.effect === 'read' ? 'routed' : 'accepted' }, how: 'schema validation' };
}

function differences(was: ReplayDecision, after: ReplayDecision, recorded: TraceTool | undefined, current: ToolContract | undefined): string[] {
  const why: string[] = [];
  if (was.status !== 'undecided') {
    if (isAccepted(was.status) !== isAccepted(after.status)) {
      why.push(`${isAccepted(was.status) ? 'accepted' : 'refused'} when recorded, ${isAccepted(after.status) ? 'accepted' : 'refused'} now`);
    } else if (was.status === 'refused' && was.code !== after.code) {
      why.push(`refused with ${after.code ?? 'no code'} instead of ${was.code ?? 'no code'}`);
    } else if (after.status !== 'accepted' && (was.status !== after.status || (after.role !== undefined && was.role !== after.role))) {
      why.push('the policy outcome changed');
    }
  }
  if (recorded !== undefined && current !== undefined) {
    if (recorded.effect !== current.effect) why.push(`effect ${recorded.effect} → ${current.effect}`);
    const rule = current.approval ?? null;
    if (recorded.approval !== rule) why.push(`approval rule ${recorded.approval ?? 'none'} → ${rule ?? 'none'}`);
  }
  return why;
}

/**
 * Re-drives every call of a trace against `catalog` in a sandbox — no Kafka, nothing executed: the
 * tool lookup, retirement, schema validation of the redacted arguments and, with a `policyTable`,
 * the policy outcome of writes. Run-level and stateful refusals (unknown run, capability, rate
 * limit, consumed proposal) are carried over. A call differs when it changes between accepted and
 * refused, is refused with another code, changes policy outcome, or its tool changes effect
 * class or approval rule. Wording is never compared.
 */
export function replayTrace(trace: Trace, catalog: Catalog, options: ReplayOptions = {}): ReplayReport {
  const recordedTools = new Map(trace.catalog.tools.map((t) => [t.address, t]));
  const calls = trace.calls.map((call): ReplayCall => {
    const was = before(call);
    const recorded = recordedTools.get(call.tool);
    const { after, how } = redrive(call, was, recorded, catalog, options);
    const why = differences(was, after, recorded, catalog.get(call.tool));
    // Same code, another field (Ajv reports the first failure first): noted, not an effect change.
    const moved = was.status === 'refused' && after.status === 'refused' && was.code === after.code && was.field !== after.field;
    const note = moved ? `${how}; now reported at ${after.field ?? '(root)'}` : how;
    return {
      command_id: call.command_id,
      tool: call.tool,
      before: was,
      after,
      differs: why.length > 0,
      why: why.length > 0 ? `${why.join('; ')} (${note})` : note,
    };
  });
  const current = catalogFingerprint(catalog);
  return {
    catalogChanged: current.sha256 !== trace.catalog.sha256,
    catalog: { recorded: trace.catalog.sha256, current: current.sha256 },
    calls,
    differences: calls.filter((c) => c.differs).length,
    invariants: checkInvariants(trace, catalog, calls),
  };
}
