import { randomUUID } from 'node:crypto';
import { contractSha256 } from '@gatehouse/contracts';
import type { Catalog } from '@gatehouse/contracts';
import { sealDecision, verifyDecisionSeal, verifyRequest } from '@gatehouse/events';
import type { AnswerScan, DecisionSeal, EventPublisher, EventSigner, ExecutionOrder, KeyRing, SealedApproval } from '@gatehouse/events';
import type { ApprovalStore } from '@gatehouse/state';
import { sentAtOf, traceIdOf } from '@gatehouse/telemetry';
import type { CarriedHeaders, GatehouseMetrics, Logger } from '@gatehouse/telemetry';
import { approvalRecord, decisionEvent, approvedOrder, refusalResult, WITHDRAWN_REASON } from './decision-events.js';
import type { ApproveChange, RequestRepository, StoredRequest } from './request-repository.js';
import { eventOf } from './webhooks.js';
import type { WebhookOutbox } from './webhooks.js';

/**
 * Publishes what a decision causes, after the decision is committed in PostgreSQL (the outbox):
 * approved → the approval record in Redis, the ApprovalDecision, the ExecutionOrder; rejected or
 * expired → the ApprovalDecision and a typed refusal to the waiting agent. `published_at` is set only
 * once all of it is acknowledged; rows left unpublished are claimed again by the sweeper, with the
 * same decision, approval and order ids, so a retry repeats rather than invents. A refusal
 * published again (the outbox's retry, a re-sent commit redelivered) is first looked for on the
 * results topic, so its command keeps one answer there.
 */
export class DecisionPublisher {
  constructor(
    private readonly repository: RequestRepository,
    private readonly publisher: EventPublisher,
    private readonly approvals: ApprovalStore,
    private readonly catalog: Catalog,
    /** This service's signer (for seals) and the keys it trusts (the policy service's, for stored requests; its own). */
    private readonly trust: { readonly signer: EventSigner; readonly keys: KeyRing },
    private readonly logger: Logger,
    /** Reads the results topic for a refusal this service published already (the request handler's too). */
    readonly answers: Pick<AnswerScan, 'published'>,
    private readonly metrics?: GatehouseMetrics,
    /** Approvers' tools are told of every decision, expiry and withdrawal. */
    private readonly webhooks?: WebhookOutbox,
  ) {}

  // The publisher signs the order (with its reply partition), the decision and the refusal with
  // this service's key: the executor runs no other order, and readers can tell a forgery.
  private async publishOrder(tenant: string, order: ExecutionOrder, headers: CarriedHeaders | undefined): Promise<void> {
    await this.publisher.publish('execute', tenant, order, headers);
  }

  private async publishDecision(row: StoredRequest, headers: CarriedHeaders | undefined): Promise<void> {
    await this.publisher.publish('approvalsDecided', row.request.tenant, decisionEvent(row), headers);
  }

  /** The sha256 of the contract this service's catalog holds for `tool`; null when it holds none. */
  private contractOf(tool: string): string | null {
    const contract = this.catalog.get(tool);
    return contract === undefined ? null : contractSha256(contract);
  }

  /** The preview tool that makes a fresh proposal for this commit tool, if the catalog names one. */
  previewOf(tool: string): string | undefined {
    return this.catalog.get(tool)?.previewedBy;
  }

  /** The seal on an approval of `row`'s request, as read before the person's decision is recorded. */
  sealOf(row: StoredRequest, change: Omit<ApproveChange, 'seal' | 'validityMs'>): DecisionSeal {
    return sealDecision(this.trust.signer, {
      request: row.request,
      decision_id: change.decisionId,
      approval_id: change.approvalId,
      order_id: change.orderId,
      decided_by: change.identity,
      decider: change.decider,
      approver_roles: change.roles,
    });
  }

  /**
   * Why a stored row may not be decided or published as it stands, or undefined when it may: its
   * request is no longer what the policy service signed, or (approved) its approval is not one this
   * service sealed when a person decided, or outlives the request. Counted and logged as untrusted.
   */
  untrusted(row: StoredRequest): string | undefined {
    const request = verifyRequest(row.request, row.request_proof ?? undefined, this.trust.keys);
    if (!request.ok) return this.refuse(row, 'approvalsRequested', request.reason, `the stored request: ${request.detail}`);
    if (row.state !== 'approved') return undefined;
    const approval: SealedApproval | undefined =
      row.decision_id === null || row.approval_id === null || row.order_id === null || row.decided_by === null
        ? undefined
        : {
            request: row.request,
            decision_id: row.decision_id,
            approval_id: row.approval_id,
            order_id: row.order_id,
            decided_by: row.decided_by,
            decider: row.decider,
            approver_roles: row.approver_roles ?? [],
          };
    if (approval === undefined) return this.refuse(row, 'approvalsDecided', 'unsigned', 'the stored approval lacks its ids');
    const sealed = verifyDecisionSeal(approval, row.decision_seal ?? undefined, this.trust.keys);
    if (!sealed.ok) return this.refuse(row, 'approvalsDecided', sealed.reason, `the stored approval: ${sealed.detail}`);
    if (row.approval_expires_at === null || row.approval_expires_at > row.request.expires_at)
      return this.refuse(row, 'approvalsDecided', 'expired', 'the stored approval outlives its request');
    return undefined;
  }

  private refuse(row: StoredRequest, kind: 'approvalsRequested' | 'approvalsDecided', reason: string, detail: string): string {
    this.metrics?.untrustedRecord(kind, reason);
    this.logger.error(
      { ...ids(row), state: row.state, reason, detail },
      'a stored request or approval no key of this service or the policy service vouches for; nothing is decided or ordered for it',
    );
    return detail;
  }

  /**
   * Publishes what `row`'s decision causes. `again`: the row was claimed before (the outbox's
   * retry), so its refusal may be on the results topic already.
   */
  async publish(row: StoredRequest, again = false): Promise<void> {
    const tenant = row.request.tenant;
    // Everything the decision causes carries the trace context of the command it answers.
    const headers = row.carried_headers ?? undefined;
    // An approval someone wrote into the database is never ordered; it stays unpublished, counted.
    if (row.state === 'approved' && this.untrusted(row) !== undefined) return;
    if (row.state === 'approved') {
      await this.saveApproval(row);
      await this.publishDecision(row, headers);
      const orderId = row.order_id ?? `ord_${randomUUID()}`;
      await this.publishOrder(tenant, approvedOrder(row, row.command_id, orderId, Date.now(), this.contractOf(row.request.tool)), headers);
    } else {
      await this.publishDecision(row, headers);
      await this.publishRefusal(row, row.command_id, headers, again);
    }
    // Before the row counts as published: an outbox retry enqueues again, and the id makes it once.
    await this.webhooks?.enqueue(row, eventOf(row, WITHDRAWN_REASON));
    await this.repository.markPublished(row.proposal_id);
    this.logger.info(
      {
        ...ids(row),
        decision: row.state,
        decision_id: row.decision_id,
        approval_id: row.approval_id,
        order_id: row.order_id,
        trace_id: traceIdOf(headers),
      },
      'decision published',
    );
  }

  /** Answers a commit re-sent for an already decided proposal, under the same decision. */
  async answerResend(row: StoredRequest, commandId: string, headers?: CarriedHeaders): Promise<void> {
    const tenant = row.request.tenant;
    if (row.state === 'approved' && this.untrusted(row) !== undefined) return;
    if (row.state === 'approved') {
      // The executor's idempotency key (run:proposal:commit) answers with the stored result.
      await this.saveApproval(row);
      await this.publishOrder(
        tenant,
        approvedOrder(row, commandId, `ord_${randomUUID()}`, Date.now(), this.contractOf(row.request.tool)),
        headers,
      );
    } else if (row.state === 'rejected' || row.state === 'expired') {
      // A redelivered re-sent commit (this service stopped before noting it answered) finds its refusal out.
      await this.publishRefusal(row, commandId, headers, true);
    }
    this.logger.info(
      { ...ids(row), command_id: commandId, decision: row.state, trace_id: traceIdOf(headers) },
      're-sent commit answered with the stored decision',
    );
  }

  private async publishRefusal(row: StoredRequest, commandId: string, headers: CarriedHeaders | undefined, again: boolean): Promise<void> {
    const result = refusalResult(row, commandId, this.previewOf(row.request.tool));
    if (again && (await this.answers.published(row.request.run_id, result, headers)) === 'published') {
      this.logger.info(
        { ...ids(row), command_id: commandId, decision: row.state },
        'refusal already on the results topic; not published again',
      );
      return;
    }
    await this.publisher.publish('results', row.request.run_id, result, headers);
    this.metrics?.resultPublished('approval', result, sentAtOf(headers));
  }

  /** Writes the approval record once; a retry finds it there. */
  private async saveApproval(row: StoredRequest): Promise<void> {
    const record = approvalRecord(row);
    if ((await this.approvals.get(record.approval_id)) !== undefined) return;
    try {
      await this.approvals.save(record);
    } catch (error) {
      // Another publisher of the same row got there first: the record is what we would have written.
      if ((await this.approvals.get(record.approval_id)) === undefined) throw error;
    }
  }
}

/** What a log line may say about a request: ids and the hash, never arguments. */
export function ids(row: StoredRequest): Record<string, string> {
  return {
    proposal_id: row.proposal_id,
    run_id: row.request.run_id,
    tenant: row.request.tenant,
    tool: row.request.tool,
    arguments_sha256: row.request.arguments_sha256,
  };
}
