import { canonicalArguments, toolError } from '@gatehouse/contracts';
import type { CanonicalArguments, Catalog, ToolContract, ToolError } from '@gatehouse/contracts';
import type { BoundaryCommand, BoundaryDeps, BoundaryRun } from './boundary-ports.js';
import { refusal } from './verdict.js';
import type { CallVerdict } from './verdict.js';
import { checkWrite } from './write-checks.js';

const NO_ROLES: readonly string[] = [];

/**
 * The boundary, in the order of `BOUNDARY_STAGES`, first failure wins: the run, the tool, the
 * capability, the size and shape of the arguments, the rate limit and, for writes, the proposal and
 * the policy table. Only a registered contract is ever routed; nothing in the command is evaluated
 * or used to build a name. Pure but for the ports in `deps`; stores nothing.
 */
export async function checkCall(command: BoundaryCommand, deps: BoundaryDeps, now: number): Promise<CallVerdict> {
  const run = await deps.runs.get(command.run_id);
  if (run === undefined || run.stopped_at !== null || run.expires_at <= now) {
    const why = run === undefined ? 'is not registered' : run.stopped_at !== null ? 'was stopped' : 'has expired';
    return refusal(toolError('RUN_NOT_FOUND', `Run ${command.run_id} ${why}`));
  }
  if (run.tenant !== command.tenant) {
    return refusal(toolError('TENANT_MISMATCH', 'The command names a tenant other than its run’s'));
  }

  const found = deps.catalog.lookup(command.tool);
  if (!found.ok) return refusal({ ...found.error, permitted: run.capabilities });
  const granted = run.capabilities.includes(found.tool.address);
  // A run granted a version before it was retired keeps calling it.
  if (found.retired && !granted) return refusal(deps.catalog.retiredError(found.tool.address));
  if (!granted) return refusal(capabilityDenied(found.tool, run, deps.catalog, deps.rolesGranting?.(found.tool.address) ?? NO_ROLES));

  if (Buffer.byteLength(command.arguments, 'utf8') > deps.maxArgumentBytes) {
    return refusal(toolError('PAYLOAD_TOO_LARGE', `Arguments exceed ${deps.maxArgumentBytes} bytes`));
  }
  let args: unknown;
  let canonical: CanonicalArguments;
  try {
    args = JSON.parse(command.arguments) as unknown;
    canonical = canonicalArguments(args);
  } catch {
    return refusal(toolError('INVALID_ARGUMENT', 'Arguments are not a JSON document'));
  }
  const valid = deps.catalog.validateInput(found.tool, args);
  if (!valid.ok) return refusal(valid.error, canonical.sha256);

  const limit = found.tool.rateLimit;
  if (limit !== undefined) {
    const scope = limit.per === 'tenant' ? `tenant:${run.tenant}` : `run:${run.run_id}`;
    const taken = await deps.limiter.take(found.tool.address, scope, limit, command.command_id);
    if (!taken.allowed) {
      // A wait that outlives the run can never succeed: say so instead of inviting a retry.
      const outlives = now + taken.retryAfterMs >= run.expires_at;
      return refusal(
        toolError('RATE_LIMITED', `Rate limit of ${found.tool.address}: ${limit.limit} calls per ${limit.windowMs} ms per ${limit.per}`, {
          retryAfterMs: taken.retryAfterMs,
          retryable: !outlives,
        }),
        canonical.sha256,
      );
    }
  }

  if (found.tool.effect === 'write') return checkWrite(command, run, found.tool, valid.value, canonical, deps, now);
  return { kind: 'read', run, tool: found.tool, canonical };
}

/** CAPABILITY_DENIED with what the run may call and, when one exists, the path that would serve. */
function capabilityDenied(tool: ToolContract, run: BoundaryRun, catalog: Catalog, granting: readonly string[]): ToolError {
  const sameName = run.capabilities.find((address) => catalog.get(address)?.name === tool.name);
  const preview = tool.previewedBy !== undefined && run.capabilities.includes(tool.previewedBy) ? tool.previewedBy : undefined;
  const path = granting.length > 0 ? `a run with role ${granting.join(' or ')}` : undefined;
  const next = sameName ?? preview ?? path;
  const message =
    tool.effect === 'write' && !run.capabilities.some((a) => catalog.get(a)?.effect === 'write')
      ? `Run ${run.run_id} (role ${run.role}) is read-only; ${tool.address} changes state`
      : `${tool.address} is not in the capabilities of run ${run.run_id} (role ${run.role})`;
  return toolError('CAPABILITY_DENIED', message, { permitted: run.capabilities, next });
}
