import { randomUUID } from 'node:crypto';
import { canonicalArguments, toolError } from '@gatehouse/contracts';
import type { Catalog, ToolContract, ToolError } from '@gatehouse/contracts';
import type { ApprovalRequest, ExecutionOrder, PendingApproval, ToolCommand } from '@gatehouse/events';
import { isActive } from '@gatehouse/state';
import type { RateLimiter, Run, RunRegistry } from '@gatehouse/state';
import { decideWrite } from './write-decision.js';
import type { WriteDeps } from './write-decision.js';

/** What the policy service does with one command. */
export type Decision =
  | { readonly kind: 'refuse'; readonly error: ToolError; readonly argumentsSha256: string | null }
  | { readonly kind: 'execute'; readonly order: ExecutionOrder }
  | { readonly kind: 'approval'; readonly request: ApprovalRequest; readonly pending: PendingApproval };

export interface DecideDeps extends WriteDeps {
  readonly catalog: Catalog;
  readonly runs: RunRegistry;
  readonly limiter: RateLimiter;
  /** Largest `arguments` text accepted, in UTF-8 bytes. */
  readonly maxArgumentBytes: number;
  /** Roles whose runs may call a tool, to tell a denied run which path would serve. */
  readonly rolesGranting?: (address: string) => readonly string[];
  readonly now?: () => number;
}

const refuse = (error: ToolError, argumentsSha256: string | null = null): Decision => ({ kind: 'refuse', error, argumentsSha256 });

/**
 * The boundary, in order, first failure wins: the run, the tool, the capability, the size and
 * shape of the arguments, the rate limit. Only a registered contract is ever routed; nothing in the
 * command is evaluated or used to build a name.
 */
export async function decide(command: ToolCommand, deps: DecideDeps): Promise<Decision> {
  const now = deps.now?.() ?? Date.now();

  const run = await deps.runs.get(command.run_id);
  if (run === undefined || !isActive(run, now)) {
    const why = run === undefined ? 'is not registered' : run.stopped_at !== null ? 'was stopped' : 'has expired';
    return refuse(toolError('RUN_NOT_FOUND', `Run ${command.run_id} ${why}`));
  }
  if (run.tenant !== command.tenant) {
    return refuse(toolError('TENANT_MISMATCH', 'The command names a tenant other than its run’s'));
  }

  const found = deps.catalog.lookup(command.tool);
  if (!found.ok) return refuse({ ...found.error, permitted: run.capabilities });
  const granted = run.capabilities.includes(found.tool.address);
  if (found.retired && !granted) return refuse(deps.catalog.retiredError(found.tool.address));
  if (!granted) return refuse(capabilityDenied(found.tool, run, deps.catalog, deps.rolesGranting?.(found.tool.address) ?? []));

  if (Buffer.byteLength(command.arguments, 'utf8') > deps.maxArgumentBytes) {
    return refuse(toolError('PAYLOAD_TOO_LARGE', `Arguments exceed ${deps.maxArgumentBytes} bytes`));
  }
  let args: unknown;
  let canonical: { canonical: string; sha256: string };
  try {
    args = JSON.parse(command.arguments) as unknown;
    canonical = canonicalArguments(args);
  } catch {
    return refuse(toolError('INVALID_ARGUMENT', 'Arguments are not a JSON document'));
  }
  const valid = deps.catalog.validateInput(found.tool, args);
  if (!valid.ok) return refuse(valid.error, canonical.sha256);

  const limit = found.tool.rateLimit;
  if (limit !== undefined) {
    const scope = limit.per === 'tenant' ? `tenant:${run.tenant}` : `run:${run.run_id}`;
    const taken = await deps.limiter.take(found.tool.address, scope, limit, command.command_id);
    if (!taken.allowed) {
      // A wait that outlives the run can never succeed: say so instead of inviting a retry.
      const outlives = now + taken.retryAfterMs >= run.expires_at;
      return refuse(
        toolError('RATE_LIMITED', `Rate limit of ${found.tool.address}: ${limit.limit} calls per ${limit.windowMs} ms per ${limit.per}`, {
          retryAfterMs: taken.retryAfterMs,
          retryable: !outlives,
        }),
        canonical.sha256,
      );
    }
  }

  if (found.tool.effect === 'write') {
    const write = await decideWrite(command, run, found.tool, valid.value, canonical, deps, now);
    return write.kind === 'refuse' ? refuse(write.error, canonical.sha256) : write;
  }

  const deadlines = [run.expires_at, command.deadline_at ?? Number.POSITIVE_INFINITY];
  return {
    kind: 'execute',
    order: {
      schema_version: 1,
      order_id: randomUUID(),
      command_id: command.command_id,
      run_id: run.run_id,
      tenant: run.tenant,
      principal: run.principal,
      environment: run.environment,
      tool: found.tool.address,
      effect: found.tool.effect,
      arguments: canonical.canonical,
      arguments_sha256: canonical.sha256,
      proposal_id: null,
      approval: null,
      idempotency_key: null,
      deadline_at: Math.min(...deadlines),
      issued_at: now,
    },
  };
}

/** CAPABILITY_DENIED with what the run may call and, when one exists, the path that would serve. */
function capabilityDenied(tool: ToolContract, run: Run, catalog: Catalog, granting: readonly string[]): ToolError {
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
