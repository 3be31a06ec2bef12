import { randomUUID } from 'node:crypto';
import { canonicalJson, isToolFailure, toolError, ToolFailure } from '@gatehouse/contracts';
import type { Catalog, ToolError, ToolImplementation } from '@gatehouse/contracts';
import { errorResult, okResult } from '@gatehouse/events';
import type { ExecutionOrder } from '@gatehouse/events';
import { buildProposal } from '@gatehouse/governance';
import type { Proposal } from '@gatehouse/state';
import type { GatehouseMetrics, Logger } from '@gatehouse/telemetry';
import type { Answer, DecisionClock, HandlerCredentials, ProposalRecords, RunLookup } from './executor-ports.js';
import { addressOf, orderContext } from './order-context.js';
import { runHandler } from './run-handler.js';
import { runStoppedError } from './run-state.js';

type Execution =
  | { readonly ok: true; readonly canonicalResult: string; readonly durationMs: number }
  | { readonly ok: false; readonly error: ToolError; readonly durationMs: number };

export interface ReadPathDeps {
  readonly catalog: Catalog;
  /** Where a preview's proposal is stored. */
  readonly proposals: Pick<ProposalRecords, 'save'>;
  /** Stopping a run is the kill switch: a read of a stopped run that has not started never runs. */
  readonly runs: RunLookup;
  readonly proposalTtlMs: number;
  readonly logger: Logger;
  readonly metrics: GatehouseMetrics;
  readonly credentials: HandlerCredentials;
  readonly clock: DecisionClock;
}

/**
 * A read, answered once through `answer` (which stages, publishes and records this command's one
 * answer): refused when its deadline passed or its run was stopped before it started; otherwise run
 * (see `executeRead`) and answered with its result or its error.
 */
export async function answerRead(
  order: ExecutionOrder,
  implementation: ToolImplementation,
  deps: ReadPathDeps,
  answer: Answer,
  logContext: Readonly<Record<string, unknown>>,
): Promise<void> {
  const address = addressOf(order);
  const refuse = (error: ToolError) => answer(errorResult(address, error, { argumentsSha256: order.arguments_sha256 }));
  if (order.deadline_at !== null && deps.clock.now() > order.deadline_at) {
    await refuse(toolError('TIMEOUT', 'The call’s deadline passed before it could start', { retryable: false }));
    return;
  }
  const stopped = await runStoppedError(deps.runs, order.run_id, deps.clock.now());
  if (stopped !== undefined) {
    await refuse(stopped);
    deps.logger.info({ ...logContext, code: stopped.code }, 'refused: the run is no longer active');
    return;
  }
  const operationId = `op_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  const execution = await executeRead(order, implementation, operationId, deps);
  deps.metrics.handlerDuration(order.tool, execution.durationMs);
  const extras = { operationId, argumentsSha256: order.arguments_sha256, durationMs: execution.durationMs };
  const result = execution.ok ? okResult(address, execution.canonicalResult, extras) : errorResult(address, execution.error, extras);
  await answer(result);
  deps.logger.info(
    {
      ...logContext,
      operation_id: operationId,
      code: execution.ok ? undefined : execution.error.code,
      field: execution.ok ? undefined : execution.error.field,
      ms: execution.durationMs,
    },
    execution.ok ? 'executed' : 'failed',
  );
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const RETRY_BACKOFF_MS = [100, 400] as const;

/**
 * Runs a read: the handler under its timeout (retried on transient failures only when the tool's
 * retry class is `safe`), then the result checked against the output schema and its byte bound —
 * nothing unvalidated reaches a result. A preview's proposal is stored before its id is returned.
 */
async function executeRead(
  order: ExecutionOrder,
  implementation: ToolImplementation,
  operationId: string,
  deps: ReadPathDeps,
): Promise<Execution> {
  const tool = implementation.contract;
  const started = Date.now();
  const args = JSON.parse(order.arguments) as unknown;
  const context = { ...orderContext(order, operationId, null), credential: deps.credentials.forRead(order, implementation) };
  const attempts = tool.retry === 'safe' ? RETRY_BACKOFF_MS.length + 1 : 1;
  let raw: unknown;
  for (let attempt = 0; ; attempt += 1) {
    try {
      raw = await runHandler(implementation, args, context, tool.timeoutMs);
      break;
    } catch (error) {
      const failure = isToolFailure(error) ? error : new ToolFailure(toolError('UPSTREAM_ERROR', 'handler failed'));
      const backoff = RETRY_BACKOFF_MS[attempt];
      const roomLeft = order.deadline_at === null || deps.clock.now() + (backoff ?? 0) + tool.timeoutMs < order.deadline_at;
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
      proposal = buildProposal(draft, tool.commits, order, deps.proposalTtlMs, deps.clock.now());
    } catch {
      deps.metrics.outputViolation(tool.address, 'OUTPUT_INVALID');
      return {
        ok: false,
        error: toolError('OUTPUT_INVALID', `${tool.address} returned a preview no proposal can be made from`),
        durationMs: Date.now() - started,
      };
    }
    // The canonical arguments are what the commit will run: its proposal schema must admit them.
    const commit = deps.catalog.get(tool.commits);
    const drafted = commit === undefined ? undefined : deps.catalog.validateProposal(commit, JSON.parse(proposal.arguments));
    if (drafted !== undefined && !drafted.ok) {
      deps.metrics.outputViolation(tool.address, drafted.error.code);
      return { ok: false, error: drafted.error, durationMs: Date.now() - started };
    }
    view = {
      ...(raw as object),
      proposal_id: proposal.proposal_id,
      expires_at: new Date(proposal.expires_at).toISOString(),
      effect: proposal.effect,
    };
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
