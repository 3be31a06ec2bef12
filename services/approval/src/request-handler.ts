import { toolError } from '@gatehouse/contracts';
import { errorResult, requestProofOf } from '@gatehouse/events';
import type { ApprovalRequest, ConsumedRecord, EventPublisher } from '@gatehouse/events';
import {
  annotateSpan,
  carriedHeaders,
  endSpan,
  endSpanThrown,
  SPAN_ATTRIBUTES,
  startRecordSpan,
  traceIdOf,
  tracerFor,
} from '@gatehouse/telemetry';
import type { CarriedHeaders, Logger, SpanOutcome } from '@gatehouse/telemetry';
import type { DecisionPublisher } from './decision-publisher.js';
import type { RequestRepository, StoredRequest } from './request-repository.js';
import type { WebhookOutbox } from './webhooks.js';

const context = (request: ApprovalRequest, carried: CarriedHeaders | undefined): Record<string, string | undefined> => ({
  proposal_id: request.proposal_id,
  command_id: request.command_id,
  run_id: request.run_id,
  tenant: request.tenant,
  tool: request.tool,
  arguments_sha256: request.arguments_sha256,
  trace_id: traceIdOf(carried),
});

const tracer = tracerFor('approval');

/** A re-sent request must name the same proposal as the stored one; anything else is refused. */
function differs(stored: ApprovalRequest, sent: ApprovalRequest): boolean {
  return (
    stored.tenant !== sent.tenant ||
    stored.run_id !== sent.run_id ||
    stored.tool !== sent.tool ||
    stored.arguments_sha256 !== sent.arguments_sha256
  );
}

/**
 * decode (done by the consumer) → check → store → answer, for one ApprovalRequest. A new proposal
 * is stored pending. The same proposal again means the agent re-sent its commit: while pending, the
 * decision will answer the new command; once decided, the stored decision answers it at once.
 */
export function requestHandler(
  repository: RequestRepository,
  decisions: DecisionPublisher,
  publisher: EventPublisher,
  logger: Logger,
  webhooks?: WebhookOutbox,
) {
  // The same refusal whenever the request comes (stamped with its request time, not the clock), so
  // a redelivered request finds its refusal on the results topic and publishes nothing more.
  const refuse = async (request: ApprovalRequest, carried: CarriedHeaders | undefined, message: string): Promise<SpanOutcome> => {
    const address = { command_id: request.command_id, run_id: request.run_id, tenant: request.tenant, tool: request.tool };
    const error = toolError('ARGUMENTS_MISMATCH', message);
    const refusal = errorResult(address, error, { argumentsSha256: request.arguments_sha256, completedAt: request.requested_at });
    if ((await decisions.answers.published(request.run_id, refusal, carried)) === 'published') {
      logger.info({ ...context(request, carried) }, 'refusal already on the results topic; not published again');
      return { status: 'error', code: error.code };
    }
    await publisher.publish('results', request.run_id, refusal, carried);
    logger.warn({ ...context(request, carried) }, message);
    return { status: 'error', code: error.code };
  };

  /**
   * One span per request: a child of the policy service's, and the parent of the decision's order
   * or refusal (the stored trace context names it), however long the person takes.
   */
  return async (request: ApprovalRequest, record: ConsumedRecord): Promise<void> => {
    const scope = startRecordSpan(tracer, `approval request ${request.tool}`, record.headers, request);
    annotateSpan(scope.span, () => ({ [SPAN_ATTRIBUTES.proposalId]: request.proposal_id }));
    let outcome: SpanOutcome;
    try {
      // The trace context of the request travels on to everything it causes.
      outcome = await handle(request, requestProofOf(record.headers), carriedHeaders(record.headers, undefined, scope.context));
    } catch (error) {
      endSpanThrown(scope.span, error);
      throw error;
    }
    endSpan(scope.span, outcome);
  };

  async function notify(proposalId: string): Promise<void> {
    if (webhooks === undefined || !webhooks.enabled) return;
    const row = await repository.get(proposalId);
    if (row !== undefined) await webhooks.enqueue(row, 'approval.requested');
  }

  async function handle(
    request: ApprovalRequest,
    proof: Readonly<Record<string, string>>,
    carried: CarriedHeaders | undefined,
  ): Promise<SpanOutcome> {
    // The consumer let through only a request the policy service signed, its arguments re-hashed;
    // the signature is kept with it, and checked again whenever it is decided or published.
    if (await repository.insert(request, proof, carried)) {
      await notify(request.proposal_id);
      logger.info(
        { ...context(request, carried), approver_role: request.approver_role, expires_at: request.expires_at },
        'approval requested',
      );
      return { status: 'pending_approval' };
    }
    // Two rounds at most: a pending request can be decided between the read and the update.
    for (let round = 0; round < 3; round += 1) {
      const row: StoredRequest | undefined = await repository.get(request.proposal_id);
      if (row === undefined) throw new Error(`approval request ${request.proposal_id} vanished`);
      if (differs(row.request, request)) {
        return refuse(request, carried, `Proposal ${request.proposal_id} is stored with other run, tenant, tool or arguments`);
      }
      // A redelivery after a failed notification notifies again (the webhook id makes it once).
      if (row.state === 'pending') await webhooks?.enqueue(row, 'approval.requested');
      if (row.command_ids.includes(request.command_id)) return { status: 'repeat' };
      if (row.state === 'pending') {
        if ((await repository.waitOn(request.proposal_id, request.command_id, carried)) !== undefined) {
          logger.info({ ...context(request, carried) }, 're-sent commit waits for the pending decision');
          return { status: 'pending_approval' };
        }
        continue;
      }
      await decisions.answerResend(row, request.command_id, carried);
      await repository.noteAnswered(request.proposal_id, request.command_id);
      return { status: row.state };
    }
    throw new Error(`approval request ${request.proposal_id} kept changing; retrying`);
  }
}
