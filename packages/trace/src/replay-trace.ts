import type { Catalog, ToolContract } from '@gatehouse/contracts';
import { stageOfRefusal, stagePosition } from '@gatehouse/governance';
import type { PolicyEvaluator, PolicySubject } from '@gatehouse/governance';
import { catalogFingerprint } from './catalog-fingerprint.js';
import { checkInvariants } from './invariants.js';
import { isAccepted } from './replay-types.js';
import type { ReplayCall, ReplayDecision, ReplayReport } from './replay-types.js';
import type { Trace, TraceCall, TraceTool } from './trace-format.js';

/** The facts a policy table decides a write on: governance's `PolicySubject`. */
export type ReplayPolicySubject = PolicySubject;

/** What replay needs of a policy table: governance's `PolicyEvaluator`, which `PolicyTable` implements. */
export type ReplayPolicyTable = PolicyEvaluator;

export interface ReplayOptions {
  /** Re-decide writes with this table; without it, the recorded policy outcome of a write is kept. */
  readonly policyTable?: ReplayPolicyTable;
  /** Environment of writes whose trace does not name one (default: none, the table is not run). */
  readonly environment?: string;
}

// Where a recorded refusal happened, as a position in the boundary's order (@gatehouse/governance).
const LOOKUP = stagePosition('lookup');
const JSON_CHECK = stagePosition('json');
const SCHEMA = stagePosition('schema');
/** A code the boundary never gives: refused after its checks (by an executor or a handler). */
const AFTER_THE_BOUNDARY = Number.MAX_SAFE_INTEGER - 1;
/** Not refused: through every check. */
const PASSED = Number.MAX_SAFE_INTEGER;

function positionOf(was: ReplayDecision): number {
  if (was.status !== 'refused') return PASSED;
  const stage = was.code === undefined ? undefined : stageOfRefusal(was.code, was.field);
  return stage === undefined ? AFTER_THE_BOUNDARY : stagePosition(stage);
}

function before(call: TraceCall): ReplayDecision {
  const { status, code, field } = call.decision;
  const role = status === 'pending_approval' ? call.approval?.role : undefined;
  return {
    status,
    ...(code === undefined ? {} : { code }),
    ...(field === undefined ? {} : { field }),
    ...(role === undefined ? {} : { role }),
  };
}

const refused = (code: string, field?: string): ReplayDecision => ({
  status: 'refused',
  code,
  ...(field === undefined || field === '' ? {} : { field }),
});

/**
 * A write routed under no rule went ahead on a grant the run already held (a commit retried after
 * its proposal was used and its operation finished: governance's `finished` verdict): the table
 * cannot judge that again from the trace, so the recorded routing stands.
 */
const routedOnExistingGrant = (call: TraceCall): boolean =>
  call.decision.status === 'routed' && call.policy !== undefined && call.policy.rule === null;

function decidePolicy(call: TraceCall, tool: ToolContract, options: ReplayOptions): ReplayDecision | undefined {
  const environment = call.policy?.environment ?? options.environment;
  if (options.policyTable === undefined || tool.effect !== 'write' || environment === undefined || routedOnExistingGrant(call))
    return undefined;
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

/**
 * The decision the current catalog (and table) would give the call, with how it was reached: the
 * boundary's checks that a trace holds the facts for are run again, in the boundary's order; a
 * refusal by a check it cannot re-run (the run, the grant, the size, the rate limit, proposal state)
 * is carried over.
 */
function redrive(
  call: TraceCall,
  was: ReplayDecision,
  recorded: TraceTool | undefined,
  catalog: Catalog,
  options: ReplayOptions,
): { after: ReplayDecision; how: string } {
  const at = positionOf(was);
  if (at < LOOKUP) return { after: was, how: 'run-level refusal, carried over' };
  const found = catalog.lookup(call.tool);
  if (!found.ok) return { after: refused(found.error.code), how: 'tool lookup' };
  // The boundary lets a run granted a version keep calling it after it is retired, but a trace
  // records no grants: a version retired since the recording is judged as for a run without one.
  if (found.retired && recorded?.retired !== true)
    return { after: refused('TOOL_VERSION_RETIRED'), how: `retired since the recording; live: ${found.live ?? 'none'}` };
  if (at > LOOKUP && at < JSON_CHECK) return { after: was, how: 'grant or size refusal, carried over' };
  if (!call.arguments_json) return { after: refused('INVALID_ARGUMENT'), how: 'arguments are not JSON' };
  const valid = catalog.validateInput(found.tool, call.arguments);
  if (!valid.ok) return { after: refused(valid.error.code, valid.error.field ?? undefined), how: 'schema validation' };
  const policy = decidePolicy(call, found.tool, options);
  const redecide = at === PASSED || at === JSON_CHECK || at === SCHEMA || was.code === 'POLICY_DENIED';
  if (policy !== undefined && redecide && was.status !== 'undecided') {
    return { after: policy, how: 'schema validation, policy table' };
  }
  if (at > SCHEMA && at !== PASSED) return { after: was, how: 'schema validation; stateful refusal carried over' };
  if (at === PASSED && was.status !== 'undecided') {
    return {
      after: was,
      how: routedOnExistingGrant(call)
        ? 'schema validation; routed on an existing approval, kept'
        : 'schema validation; recorded routing kept',
    };
  }
  return { after: { status: found.tool.effect === 'read' ? 'routed' : 'accepted' }, how: 'schema validation' };
}

function differences(
  was: ReplayDecision,
  after: ReplayDecision,
  recorded: TraceTool | undefined,
  current: ToolContract | undefined,
): string[] {
  const why: string[] = [];
  if (was.status !== 'undecided') {
    if (isAccepted(was.status) !== isAccepted(after.status)) {
      why.push(
        `${isAccepted(was.status) ? 'accepted' : 'refused'} when recorded, ${isAccepted(after.status) ? 'accepted' : 'refused'} now`,
      );
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
