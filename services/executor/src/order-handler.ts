import { contractSha256, toolError } from '@gatehouse/contracts';
import type { ToolError, ToolImplementation } from '@gatehouse/contracts';
import { DeadLetters, errorResult } from '@gatehouse/events';
import type { ConsumedRecord, ExecutionOrder, PublishCondition, ToolResult } from '@gatehouse/events';
import { carriedHeaders, endSpan, endSpanThrown, noteOutcome, sentAtOf, startRecordSpan, tracerFor } from '@gatehouse/telemetry';
import type { SpanScope } from '@gatehouse/telemetry';
import { claimCommand, commandAnswer } from './command-claim.js';
import type { CommandDelivery } from './command-claim.js';
import type { AnswerLog, EventSink } from './executor-ports.js';
import { addressOf, logContextOf } from './order-context.js';
import type { WritePathDeps } from './keyed-write.js';
import { answerRead } from './read-path.js';
import { tracedImplementation } from './run-handler.js';
import { executeWrite } from './write-pipeline.js';

const tracer = tracerFor('executor');

/** What the write path needs (WritePathDeps), and the hosted implementations, the whole event sink and how long a preview's proposal lives. */
export interface OrderHandlerDeps extends Omit<WritePathDeps, 'publisher'> {
  readonly implementations: ReadonlyMap<string, ToolImplementation>;
  readonly publisher: EventSink;
  /** Asked before a staged answer is published again. */
  readonly answers: AnswerLog;
  readonly proposalTtlMs: number;
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
    return toolError(
      'TOOL_VERSION_UNAVAILABLE',
      `${address} (${effect}) is ${why}; nothing ran`,
      hosted.length > 0 ? { next: hosted.join(', ') } : {},
    );
  };
  /**
   * Why this executor may not run `order` with what it hosts under its address, or undefined when
   * it may. Never another version in its place, and never another contract under the same version.
   */
  const notHosted = (order: ExecutionOrder, hosted: ToolImplementation | undefined): ToolError | undefined => {
    // The policy service routed a tool version this executor's pack does not have (or has with
    // another effect): during a rolling upgrade the two run different packs.
    if (hosted === undefined) return unavailable(order.tool, order.effect, 'not in this executor’s tool pack');
    if (hosted.contract.effect !== order.effect) return unavailable(order.tool, order.effect, `a ${hosted.contract.effect} here`);
    const here = contractSha256(hosted.contract);
    if (order.contract_sha256 == null || order.contract_sha256 === here) return undefined;
    // One address, two tools: what was decided (and perhaps shown to a person) is not what runs here.
    return toolError(
      'CONTRACT_MISMATCH',
      `${order.tool} was ordered under contract sha256 ${order.contract_sha256.slice(0, 12)}…, and this executor hosts ${here.slice(0, 12)}… under that address; nothing ran`,
    );
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
    // Trace context (naming this execution's span), the reply partition (signed with the order) and
    // the command's send time travel on to the result and any operator handoff.
    const headers = carriedHeaders(record.headers, undefined, scope.context);
    const logContext = logContextOf(order, record.headers);
    const publish = async (result: ToolResult, holds: PublishCondition): Promise<void> => {
      await deps.publisher.publish('results', order.run_id, result, headers, holds);
      deps.metrics.executed(result, sentAtOf(headers));
      noteOutcome(scope.span, { status: result.status, code: result.error?.code });
    };
    const delivery: CommandDelivery = {
      order,
      record,
      origin: `${record.topic}:${record.partition}:${record.offset}`,
      logContext,
      publish,
      alreadyOut: (result) => deps.answers.published(order.run_id, result, headers),
    };
    const hosted = deps.implementations.get(order.tool);
    const held = await claimCommand(delivery, hosted?.contract.timeoutMs, { ...deps, logger: log, deadLetters });
    if (held === undefined) return;
    const answer = commandAnswer(delivery, held, deps.ledger, deps.leaseMs);
    const stopRenewing = deps.ledger.keep(held.key, held.owner, deps.leaseMs);
    try {
      const refusal = notHosted(order, hosted);
      if (refusal !== undefined || hosted === undefined) {
        const error = refusal ?? unavailable(order.tool, order.effect, 'not in this executor’s tool pack');
        await answer(errorResult(addressOf(order), error, { argumentsSha256: order.arguments_sha256 }));
        log.warn({ ...logContext, code: error.code, ordered_contract: order.contract_sha256 ?? null }, 'refused');
        return;
      }
      const implementation = tracedImplementation(hosted, scope);
      if (order.effect === 'write') {
        await executeWrite(order, implementation, { headers, origin: delivery.origin, span: scope.span }, { ...deps, logger: log }, answer);
        return;
      }
      await answerRead(order, implementation, { ...deps, logger: log }, answer, logContext);
    } finally {
      stopRenewing();
    }
  }
}
