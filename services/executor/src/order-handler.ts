import { randomUUID } from 'node:crypto';
import { toolError } from '@gatehouse/contracts';
import type { Catalog, ToolError, ToolImplementation } from '@gatehouse/contracts';
import { errorResult, fromStoredOutcome, okResult, toStoredOutcome, verifyOrder } from '@gatehouse/events';
import type { ConsumedRecord, EventPublisher, ExecutionOrder, ResultAddress, ToolResult, TrustedKeys } from '@gatehouse/events';
import type { ApprovalStore, IdempotencyStore, ProposalStore, ResourceLock, RunRegistry, SlotPool } from '@gatehouse/state';
import { carriedHeaders, endSpan, endSpanThrown, noteOutcome, sentAtOf, startRecordSpan, traceIdOf, tracerFor } from '@gatehouse/telemetry';
import type { GatehouseMetrics, Logger, SpanScope } from '@gatehouse/telemetry';
import { claimOrWait, keepLease } from './claim-wait.js';
import { tracedImplementation } from './run-handler.js';
import { runStoppedError } from './run-state.js';
import { executeRead } from './read-path.js';
import { executeWrite } from './write-path.js';
import type { SlotLimits } from './write-path.js';

const tracer = tracerFor('executor');

export interface OrderHandlerDeps {
  readonly catalog: Catalog;
  readonly implementations: ReadonlyMap<string, ToolImplementation>;
  /** Only the policy and approval services order executions: their public keys. */
  readonly trustedKeys: TrustedKeys;
  readonly idempotency: IdempotencyStore;
  readonly proposals: ProposalStore;
  readonly approvals: ApprovalStore;
  /** Stopping a run is the kill switch: an order of a stopped run that has not started never runs. */
  readonly runs: RunRegistry;
  readonly slots: SlotPool;
  readonly locks: ResourceLock;
  readonly limits: SlotLimits;
  readonly publisher: EventPublisher;
  readonly executorId: string;
  readonly leaseMs: number;
  readonly proposalTtlMs: number;
  readonly logger: Logger;
  readonly metrics: GatehouseMetrics;
}

/**
 * One execution order: claim its command (so a redelivery, a rebalance or a crash never yields a
 * second execution or result), run it, publish the result, then record that it is done.
 */
export function orderHandler(deps: OrderHandlerDeps) {
  const log = deps.logger.child({ component: 'execute' });
  /** The refusal of an order for a tool version this executor does not host, naming the versions it does. */
  const unavailable = (address: string, effect: string, why: string): ToolError => {
    const name = address.replace(/\.v\d+$/, '');
    const hosted = [...deps.implementations.keys()].filter((a) => a.replace(/\.v\d+$/, '') === name).sort();
    return toolError('TOOL_VERSION_UNAVAILABLE', `${address} (${effect}) is ${why}; nothing ran`, hosted.length > 0 ? { next: hosted.join(', ') } : {});
  };
  /** One span per order: a child of the span that ordered it, the parent of its handler's and of its result. */
  return async (order: ExecutionOrder, record: ConsumedRecord): Promise<void> => {
    const scope = startRecordSpan(tracer, `execute ${order.tool}`, record.headers, order);
    try {
      await handle(order, record, scope);
    } catch (error) {
      endSpanThrown(scope.span, error);
      throw error;
    }
    endSpan(scope.span);
  };

  async function handle(order: ExecutionOrder, record: ConsumedRecord, scope: SpanScope): Promise<void> {
    const address: ResultAddress = { command_id: order.command_id, run_id: order.run_id, tenant: order.tenant, tool: order.tool };
    // Trace context (naming this execution's span) and the command's send time travel on to the
    // result and any operator handoff.
    const headers = carriedHeaders(record.headers, undefined, scope.context);
    const context = { command_id: order.command_id, run_id: order.run_id, tenant: order.tenant, tool: order.tool, arguments_sha256: order.arguments_sha256, trace_id: traceIdOf(record.headers) };
    const publish = async (result: ToolResult): Promise<void> => {
      await deps.publisher.publish('results', order.run_id, result, headers);
      deps.metrics.executed(result, sentAtOf(headers));
      noteOutcome(scope.span, { status: result.status, code: result.error?.code });
    };
    const refuse = (error: ToolError): ToolResult => errorResult(address, error, { argumentsSha256: order.arguments_sha256 });

    // Whoever can write to the topic is not thereby trusted: an order runs only if a trusted key
    // signed exactly this order (its arguments re-hashed). Deadlines are judged below, per path,
    // as before, so the verifier is not asked about them.
    const trusted = verifyOrder(order, record.headers, deps.trustedKeys, Number.NEGATIVE_INFINITY);
    if (!trusted.ok) {
      deps.metrics.untrustedOrder(trusted.reason);
      await publish(refuse(toolError('ORDER_NOT_TRUSTED', `The execution order was refused (${trusted.reason}); nothing ran`, { details: { reason: trusted.reason } })));
      log.warn({ ...context, code: 'ORDER_NOT_TRUSTED', reason: trusted.reason }, 'refused an order no trusted key vouches for');
      return;
    }

    const hosted = deps.implementations.get(order.tool);
    if (hosted === undefined || hosted.contract.effect !== order.effect) {
      // The policy service routed a tool version this executor's pack does not have (or has with
      // another effect): during a rolling upgrade the two run different packs. Never run another
      // version in its place.
      const error = unavailable(order.tool, order.effect, hosted === undefined ? 'not in this executor’s tool pack' : `a ${hosted.contract.effect} here`);
      await publish(refuse(error));
      log.warn({ ...context, code: error.code }, 'refused');
      return;
    }
    const implementation = tracedImplementation(hosted, scope);
    if (order.effect === 'write') {
      await executeWrite(order, implementation, { headers, origin: `${record.topic}:${record.partition}:${record.offset}`, span: scope.span }, { ...deps, logger: log });
      return;
    }

    const key = `cmd:${order.command_id}`;
    const origin = `${record.topic}:${record.partition}:${record.offset}`;
    const operationId = `op_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
    const owner = `${deps.executorId}/${operationId}`;
    const claimDeadline = Date.now() + deps.leaseMs * 2 + implementation.contract.timeoutMs;
    const claim = await claimOrWait(deps.idempotency, key, order.arguments_sha256, owner, deps.leaseMs, claimDeadline, order.command_id);
    if (claim.kind === 'in_progress') {
      // Still held by a live owner: leave the record unfinished so it comes back, rather than
      // dropping it — if that owner dies, this delivery is the one that answers.
      throw new Error(`command ${order.command_id} is still held by ${claim.owner}`);
    }
    if (claim.kind === 'reused') {
      await publish(refuse(toolError('IDEMPOTENCY_KEY_REUSED', 'This command id was already used with other arguments')));
      return;
    }
    if (claim.kind !== 'claimed' && claim.kind !== 'orphaned') {
      log.info({ ...context, claim: claim.kind }, 'already answered; not executed again');
      return;
    }
    // The answer is staged with the claim before it is published and replaced by the final state
    // after: an executor that dies between the two leaves its answer for the next owner to repeat.
    const answer = async (result: ToolResult): Promise<void> => {
      await deps.idempotency.stage(key, owner, toStoredOutcome(result, origin));
      await publish(result);
      await deps.idempotency.finish(key, owner, result.status === 'ok' ? 'succeeded' : 'failed', result.status);
    };
    if (claim.kind === 'orphaned' && claim.staged !== undefined) {
      const { result } = fromStoredOutcome(claim.staged, address, order.arguments_sha256);
      await publish(result);
      await deps.idempotency.finish(key, owner, result.status === 'ok' ? 'succeeded' : 'failed', result.status);
      log.info({ ...context, previous_owner: claim.previousOwner }, 'answered with the answer an executor staged before it stopped');
      return;
    }
    if (order.deadline_at !== null && Date.now() > order.deadline_at) {
      await answer(refuse(toolError('TIMEOUT', 'The call’s deadline passed before it could start', { retryable: false })));
      return;
    }
    const stopped = await runStoppedError(deps.runs, order.run_id);
    if (stopped !== undefined) {
      await answer(refuse(stopped));
      log.info({ ...context, code: stopped.code }, 'refused: the run is no longer active');
      return;
    }

    const stopRenewing = keepLease(() => deps.idempotency.renew(key, owner, deps.leaseMs), deps.leaseMs);
    let execution;
    try {
      execution = await executeRead(order, implementation, {
        catalog: deps.catalog,
        proposals: deps.proposals,
        proposalTtlMs: deps.proposalTtlMs,
        operationId,
        metrics: deps.metrics,
      });
    } finally {
      stopRenewing();
    }
    deps.metrics.handlerDuration(order.tool, execution.durationMs);
    const extras = { operationId, argumentsSha256: order.arguments_sha256, durationMs: execution.durationMs };
    const result = execution.ok ? okResult(address, execution.canonicalResult, extras) : errorResult(address, execution.error, extras);
    await answer(result);
    log.info(
      { ...context, operation_id: operationId, code: execution.ok ? undefined : execution.error.code, field: execution.ok ? undefined : execution.error.field, ms: execution.durationMs },
      execution.ok ? 'executed' : 'failed',
    );
  }
}
