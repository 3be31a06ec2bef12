import { randomUUID } from 'node:crypto';
import { toolError } from '@gatehouse/contracts';
import type { Catalog, ToolError, ToolImplementation } from '@gatehouse/contracts';
import { DeadLetters, errorResult, fromStoredOutcome, okResult, toStoredOutcome } from '@gatehouse/events';
import type { ConsumedRecord, EventPublisher, ExecutionOrder, ResultAddress, ToolResult } from '@gatehouse/events';
import type { ApprovalStore, IdempotencyStore, ProposalStore, ResourceLock, RunRegistry, SlotPool } from '@gatehouse/state';
import { carriedHeaders, endSpan, endSpanThrown, noteOutcome, sentAtOf, startRecordSpan, traceIdOf, tracerFor } from '@gatehouse/telemetry';
import type { GatehouseMetrics, Logger, SpanScope } from '@gatehouse/telemetry';
import type { CallCredentials } from './call-credentials.js';
import { claimOrWait, keepLease } from './claim-wait.js';
import { tracedImplementation } from './run-handler.js';
import { runStoppedError } from './run-state.js';
import { executeRead } from './read-path.js';
import { executeWrite, settleKeyOfStagedAnswer } from './write-path.js';
import type { Answer, SlotLimits } from './write-path.js';

const tracer = tracerFor('executor');

// How long a copy waits for another owner of its command, beyond two leases, when the tool is not
// hosted here and so has no timeout to go by.
const DEFAULT_TIMEOUT_MS = 30_000;

export interface OrderHandlerDeps {
  readonly catalog: Catalog;
  readonly implementations: ReadonlyMap<string, ToolImplementation>;
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
  /** What handlers present to their systems of record. */
  readonly credentials: CallCredentials;
}

/** The claim that makes a command's answer one answer: per run, so two runs' command ids never meet. */
export function commandClaimKey(runId: string, commandId: string): string {
  return `cmd:${runId}:${commandId}`;
}

/**
 * One execution order, whose signature the consumer has checked (an order no policy or approval
 * key vouches for never gets here, and is never answered): claim its command, so a redelivery, a
 * rebalance, a crash or a replay of the record never yields a second execution or a second answer;
 * run it; stage, publish and record its one answer.
 */
export function orderHandler(deps: OrderHandlerDeps) {
  const log = deps.logger.child({ component: 'execute' });
  const deadLetters = new DeadLetters(deps.publisher);
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
    // Trace context (naming this execution's span), the reply partition (signed with the order) and
    // the command's send time travel on to the result and any operator handoff.
    const headers = carriedHeaders(record.headers, undefined, scope.context);
    const context = { command_id: order.command_id, run_id: order.run_id, tenant: order.tenant, tool: order.tool, arguments_sha256: order.arguments_sha256, trace_id: traceIdOf(record.headers) };
    const origin = `${record.topic}:${record.partition}:${record.offset}`;
    const publish = async (result: ToolResult): Promise<void> => {
      await deps.publisher.publish('results', order.run_id, result, headers);
      deps.metrics.executed(result, sentAtOf(headers));
      noteOutcome(scope.span, { status: result.status, code: result.error?.code });
    };
    const refuse = (error: ToolError): ToolResult => errorResult(address, error, { argumentsSha256: order.arguments_sha256 });
    const hosted = deps.implementations.get(order.tool);

    const key = commandClaimKey(order.run_id, order.command_id);
    const owner = `${deps.executorId}/${randomUUID().replace(/-/g, '').slice(0, 16)}`;
    const claimDeadline = Date.now() + deps.leaseMs * 2 + (hosted?.contract.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const claim = await claimOrWait(deps.idempotency, key, order.arguments_sha256, owner, deps.leaseMs, claimDeadline, order.command_id);
    if (claim.kind === 'in_progress') {
      // Still held by a live owner: leave the record unfinished so it comes back, rather than
      // dropping it — if that owner dies, this delivery is the one that answers.
      throw new Error(`command ${order.command_id} is still held by ${claim.owner}`);
    }
    if (claim.kind === 'reused') {
      // Another order under a command id already answered: answering it would give the command a
      // second answer. Operators find it in the DLQ.
      deps.metrics.duplicateOrder('command_id_reused');
      if (record.origin !== undefined) await deadLetters.send(record.origin, 'command_id_reused', 'an order with another arguments_sha256 under a command id already claimed; not answered');
      log.warn({ ...context }, 'order under a claimed command id with a different hash; not answered');
      return;
    }
    if (claim.kind === 'stored' || claim.kind === 'unknown') {
      // A replay of the order, a copy the policy service published again, or a redelivery after
      // the answer went out: the command has its answer, and gets no other.
      deps.metrics.duplicateOrder('answered');
      log.info({ ...context, claim: claim.kind }, 'command already answered; this copy gets nothing');
      return;
    }
    if (claim.kind === 'orphaned' && claim.staged !== undefined) {
      const { result } = fromStoredOutcome(claim.staged, address, order.arguments_sha256);
      // The write's key was staged beside this answer: settled now, or a later retry (and an
      // operator's resolution of an unknown outcome) would find it in flight.
      if (order.effect === 'write' && order.idempotency_key !== null) await settleKeyOfStagedAnswer(deps.idempotency, order, owner, deps.leaseMs);
      await publish(result);
      await deps.idempotency.finish(key, owner, result.status === 'ok' ? 'succeeded' : 'failed', claim.staged);
      log.info({ ...context, previous_owner: claim.previousOwner }, 'answered with the answer an executor staged before it stopped');
      return;
    }
    // The answer is staged with the claim before it is published and replaced by the final state
    // after: an executor that dies between the two leaves its answer for the next owner to repeat.
    // A write stages and settles its key alongside (`keyed`): settled before the answer is out, so
    // whoever reads the answer and retries at once finds the stored outcome.
    const answer: Answer = async (result, keyed) => {
      const outcome = toStoredOutcome(result, origin);
      const [, staging] = await Promise.all([keyed?.stage(), deps.idempotency.stageAnswer(key, owner, outcome)]);
      if (staging === 'taken') {
        // This owner's lease ran out and another owner took the command over (a stalled event
        // loop): that owner answers, so publishing here could give the command a second answer.
        // (A claim Redis lost is no one else's: the answer still goes out.)
        throw new Error(`command ${order.command_id} was taken over by another owner; it answers`);
      }
      await keyed?.settle();
      await publish(result);
      await deps.idempotency.finish(key, owner, result.status === 'ok' ? 'succeeded' : 'failed', outcome);
    };
    const stopRenewing = keepLease(() => deps.idempotency.renew(key, owner, deps.leaseMs), deps.leaseMs);
    try {
      if (hosted === undefined || hosted.contract.effect !== order.effect) {
        // The policy service routed a tool version this executor's pack does not have (or has with
        // another effect): during a rolling upgrade the two run different packs. Never run another
        // version in its place.
        const error = unavailable(order.tool, order.effect, hosted === undefined ? 'not in this executor’s tool pack' : `a ${hosted.contract.effect} here`);
        await answer(refuse(error));
        log.warn({ ...context, code: error.code }, 'refused');
        return;
      }
      const implementation = tracedImplementation(hosted, scope);
      if (order.effect === 'write') {
        await executeWrite(order, implementation, { headers, origin, span: scope.span }, { ...deps, logger: log }, answer);
        return;
      }
      await read(order, implementation, context, answer, refuse);
    } finally {
      stopRenewing();
    }
  }

  async function read(
    order: ExecutionOrder,
    implementation: ToolImplementation,
    context: Record<string, unknown>,
    answer: Answer,
    refuse: (error: ToolError) => ToolResult,
  ): Promise<void> {
    const address: ResultAddress = { command_id: order.command_id, run_id: order.run_id, tenant: order.tenant, tool: order.tool };
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
    const operationId = `op_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
    const execution = await executeRead(order, implementation, {
      catalog: deps.catalog,
      proposals: deps.proposals,
      proposalTtlMs: deps.proposalTtlMs,
      operationId,
      metrics: deps.metrics,
      credentials: deps.credentials,
    });
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
