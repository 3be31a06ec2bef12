import type { ErrorCode } from '@gatehouse/contracts';

/**
 * The boundary's checks in the order they run; the first that fails decides, with its code. The
 * stage order and the code → stage map below are both derived from this one list, and the
 * governance tests drive `checkCall` through every entry in this order.
 *
 * Two stages share a code with an earlier one, and the field tells them apart: `schema` answers
 * INVALID_ARGUMENT like `json` but always names a field (`''` for the root; `*` below), and
 * `proposal-run` answers CAPABILITY_DENIED like `capability` but always at `/proposal_id`.
 */
const CHECKS = [
  /** The run exists, is not stopped and has not expired. */
  { stage: 'run', code: 'RUN_NOT_FOUND' },
  /** The command names its run's tenant. */
  { stage: 'tenant', code: 'TENANT_MISMATCH' },
  /** The address names a tool version of the catalog. */
  { stage: 'lookup', code: 'TOOL_NOT_FOUND' },
  /** A retired version, refused only to runs that were not granted it. */
  { stage: 'retired', code: 'TOOL_VERSION_RETIRED' },
  /** The run was granted the tool. */
  { stage: 'capability', code: 'CAPABILITY_DENIED' },
  /** The arguments' UTF-8 size. */
  { stage: 'size', code: 'PAYLOAD_TOO_LARGE' },
  /** The arguments are one JSON document with a canonical form. */
  { stage: 'json', code: 'INVALID_ARGUMENT' },
  /** The arguments match the tool's input schema. */
  { stage: 'schema', code: 'INVALID_ARGUMENT', field: '*' },
  /** The tool's rate limit, per tenant or per run. */
  { stage: 'rate-limit', code: 'RATE_LIMITED' },
  /** Writes of a preview/commit pair: the proposal exists, for this tool. */
  { stage: 'proposal', code: 'PROPOSAL_NOT_FOUND', field: '/proposal_id' },
  /** …and belongs to this run and tenant. */
  { stage: 'proposal-run', code: 'CAPABILITY_DENIED', field: '/proposal_id' },
  /** …and was not used, unless its operation finished (then the stored result answers). */
  { stage: 'consumed', code: 'PROPOSAL_CONSUMED' },
  /** …and has not expired. */
  { stage: 'expired', code: 'PROPOSAL_EXPIRED' },
  /** Every write: the policy table allows it, asks a person, or denies it. */
  { stage: 'policy', code: 'POLICY_DENIED' },
] as const satisfies readonly { readonly stage: string; readonly code: ErrorCode; readonly field?: string }[];

export type BoundaryStage = (typeof CHECKS)[number]['stage'];

export interface BoundaryCheck {
  readonly stage: BoundaryStage;
  /** The code a refusal at this stage carries. */
  readonly code: ErrorCode;
  /** The field such a refusal always names (`*`: some field), when that is what sets it apart. */
  readonly field?: string;
}

/** Every check, in order. */
export const BOUNDARY_CHECKS: readonly BoundaryCheck[] = Object.freeze(CHECKS.map((check) => Object.freeze({ ...check })));

/** The stages, in the order they run. */
export const BOUNDARY_STAGES: readonly BoundaryStage[] = Object.freeze(CHECKS.map((check) => check.stage));

const POSITION: ReadonlyMap<BoundaryStage, number> = new Map(BOUNDARY_STAGES.map((stage, index) => [stage, index]));

/** Code (or `code field`, or `code *`) → the first stage that refuses with it. */
const STAGE_OF: ReadonlyMap<string, BoundaryStage> = (() => {
  const map = new Map<string, BoundaryStage>();
  for (const check of BOUNDARY_CHECKS) {
    if (!map.has(check.code)) map.set(check.code, check.stage);
    if (check.field !== undefined) map.set(`${check.code} ${check.field}`, check.stage);
  }
  return map;
})();

/**
 * The stage a refusal came from, by its code and field; undefined for a code the boundary never
 * gives (an executor's or a handler's).
 */
export function stageOfRefusal(code: string, field?: string): BoundaryStage | undefined {
  if (field === undefined) return STAGE_OF.get(code);
  return STAGE_OF.get(`${code} ${field}`) ?? STAGE_OF.get(`${code} *`) ?? STAGE_OF.get(code);
}

/** Where a stage runs: 0 for the first. */
export function stagePosition(stage: BoundaryStage): number {
  return POSITION.get(stage) ?? -1;
}
