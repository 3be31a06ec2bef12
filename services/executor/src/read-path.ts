import { canonicalJson, isToolFailure, toolError, ToolFailure } from '@gatehouse/contracts';
import type { Catalog, ToolError, ToolImplementation } from '@gatehouse/contracts';
import type { ExecutionOrder } from '@gatehouse/events';
import { buildProposal } from '@gatehouse/governance';
import type { Proposal, ProposalStore } from '@gatehouse/state';
import type { GatehouseMetrics } from '@gatehouse/telemetry';
import type { CallCredentials } from './call-credentials.js';
import { runHandler } from './run-handler.js';

export type Execution =
  | { readonly ok: true; readonly canonicalResult: string; readonly durationMs: number }
  | { readonly ok: false; readonly error: ToolError; readonly durationMs: number };

export interface ReadDeps {
  readonly catalog: Catalog;
  readonly proposals: ProposalStore;
  readonly proposalTtlMs: number;
  readonly operationId: string;
  readonly metrics: GatehouseMetrics;
  readonly credentials: CallCredentials;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const RETRY_BACKOFF_MS = [100, 400] as const;

/**
 * Runs a read: the handler under its timeout (retried on transient failures only when the tool's
 * retry class is `safe`), then the result checked against the output schema and its byte bound —
 * nothing unvalidated reaches a result. A preview's proposal is stored before its id is returned.
 */
export async function executeRead(order: ExecutionOrder, implementation: ImplementationLike, deps: ReadDeps): Promise<Execution> {
  const tool = implementation.contract;
  const started = Date.now();
  const args = JSON.parse(order.arguments) as unknown;
  const context = {
    commandId: order.command_id,
    operationId: deps.operationId,
    runId: order.run_id,
    tenant: order.tenant,
    principal: order.principal,
    environment: order.environment,
    idempotencyKey: null,
    deadlineAt: order.deadline_at,
    credential: deps.credentials.forRead(order, implementation),
  };
  const attempts = tool.retry === 'safe' ? RETRY_BACKOFF_MS.length + 1 : 1;
  let raw: unknown;
  for (let attempt = 0; ; attempt += 1) {
    try {
      raw = await runHandler(implementation, args, context, tool.timeoutMs);
      break;
    } catch (error) {
      const failure = isToolFailure(error) ? error : new ToolFailure(toolError('UPSTREAM_ERROR', 'handler failed'));
      const backoff = RETRY_BACKOFF_MS[attempt];
      const roomLeft = order.deadline_at === null || Date.now() + (backoff ?? 0) + tool.timeoutMs < order.deadline_at;
      if (!failure.error.retryable || attempt + 1 >= attempts || backoff === undefined || !roomLeft) {
        return { ok: false, error: failure.error, durationMs: Date.now() - started };
      }
      deps.metrics.retry(tool.address, tool.retry);
      await sleep(backoff);
    }
  }

  let view = raw;
  let proposal: Proposal | undefined;
  if (tool.commits !== undefined && implementation.propose !== undefined) {
    try {
      const draft = implementation.propose(args, raw, { ...context, signal: AbortSignal.abort() });
      proposal = buildProposal(draft, tool.commits, order, deps.proposalTtlMs);
    } catch {
      deps.metrics.outputViolation(tool.address, 'OUTPUT_INVALID');
      return { ok: false, error: toolError('OUTPUT_INVALID', `${tool.address} returned a preview no proposal can be made from`), durationMs: Date.now() - started };
    }
    // The canonical arguments are what the commit will run: its proposal schema must admit them.
    const commit = deps.catalog.get(tool.commits);
    const drafted = commit === undefined ? undefined : deps.catalog.validateProposal(commit, JSON.parse(proposal.arguments));
    if (drafted !== undefined && !drafted.ok) {
      deps.metrics.outputViolation(tool.address, drafted.error.code);
      return { ok: false, error: drafted.error, durationMs: Date.now() - started };
    }
    view = { ...(raw as object), proposal_id: proposal.proposal_id, expires_at: new Date(proposal.expires_at).toISOString(), effect: proposal.effect };
  }
  const valid = deps.catalog.validateOutput(tool, view);
  if (!valid.ok) {
    deps.metrics.outputViolation(tool.address, valid.error.code);
    return { ok: false, error: valid.error, durationMs: Date.now() - started };
  }
  // Stored only once the preview's view is valid: a bad preview never leaves a proposal behind.
  if (proposal !== undefined) await deps.proposals.save(proposal);
  const canonicalResult = canonicalJson(valid.value);
  if (Buffer.byteLength(canonicalResult, 'utf8') > tool.maxResultBytes) {
    deps.metrics.outputViolation(tool.address, 'RESULT_TOO_LARGE');
    return {
      ok: false,
      error: toolError('RESULT_TOO_LARGE', `Result of ${tool.address} exceeds ${tool.maxResultBytes} bytes`),
      durationMs: Date.now() - started,
    };
  }
  return { ok: true, canonicalResult, durationMs: Date.now() - started };
}

export type ImplementationLike = ToolImplementation;
