import type { Pool } from 'pg';
import { ApprovalState } from '@gatehouse/events';
import type { ApprovalRequest, Decider, DecisionSeal } from '@gatehouse/events';

export type { Decider };
import type { CarriedHeaders } from '@gatehouse/telemetry';
import { tablesIn } from './db.js';
import type { Tables } from './db.js';

/** Where a request stands; every state but `pending` is final. Defined beside the API's view of a request, which the CLI reads too. */
export { ApprovalState };

export const APPROVAL_STATES: readonly ApprovalState[] = Object.values(ApprovalState);

/** A row of `approval_requests`: the canonical request exactly as received, and its decision. */
export interface StoredRequest {
  readonly proposal_id: string;
  readonly tenant: string;
  readonly request: ApprovalRequest;
  readonly state: ApprovalState;
  /** The latest command waiting on the decision; the decision answers it. */
  readonly command_id: string;
  /** Every command id this proposal has been asked for (answered or superseded). */
  readonly command_ids: readonly string[];
  readonly expires_at: number;
  readonly decision_id: string | null;
  readonly decided_by: string | null;
  /** Who decided, as their identity provider names them; null for the service's own decisions (expiry, withdrawal). */
  readonly decider: Decider | null;
  readonly decided_at: number | null;
  readonly reason: string | null;
  readonly approver_roles: readonly string[] | null;
  readonly approval_id: string | null;
  readonly approval_expires_at: number | null;
  readonly order_id: string | null;
  readonly published_at: number | null;
  /** Trace context (and send time) of the command `command_id`: copied onto what the decision publishes. */
  readonly carried_headers: CarriedHeaders | null;
  /** The policy service's signature headers of the request as it arrived; null on a row stored before they were kept. */
  readonly request_proof: Readonly<Record<string, string>> | null;
  /** The approval service's seal on an approval, made when the person decided; null unless approved. */
  readonly decision_seal: DecisionSeal | null;
  /** The database's clock when the row was read: time left is measured against it. */
  readonly now: number;
}

interface Row {
  proposal_id: string;
  tenant: string;
  request: ApprovalRequest;
  state: ApprovalState;
  command_id: string;
  command_ids: string[];
  expires_at_ms: string;
  decision_id: string | null;
  decided_by: string | null;
  decider: Decider | null;
  decided_at_ms: string | null;
  reason: string | null;
  approver_roles: string[] | null;
  approval_id: string | null;
  approval_expires_at_ms: string | null;
  order_id: string | null;
  published_at_ms: string | null;
  carried_headers: CarriedHeaders | null;
  request_proof: Record<string, string> | null;
  decision_seal: Record<string, string> | null;
  now_ms: string;
}

const ms = (column: string): string => `(extract(epoch from ${column}) * 1000)::bigint`;

const COLUMNS = `proposal_id, tenant, request, state, command_id, command_ids, ${ms('expires_at')} AS expires_at_ms,
  decision_id, decided_by, decider, ${ms('decided_at')} AS decided_at_ms, reason, approver_roles, approval_id,
  ${ms('approval_expires_at')} AS approval_expires_at_ms, order_id, ${ms('published_at')} AS published_at_ms,
  carried_headers, request_proof, decision_seal, ${ms('now()')} AS now_ms`;

const num = (value: string | null): number | null => (value === null ? null : Number(value));

function toStored(row: Row): StoredRequest {
  return {
    proposal_id: row.proposal_id,
    tenant: row.tenant,
    request: row.request,
    state: row.state,
    command_id: row.command_id,
    command_ids: row.command_ids,
    expires_at: Number(row.expires_at_ms),
    decision_id: row.decision_id,
    decided_by: row.decided_by,
    decider: row.decider,
    decided_at: num(row.decided_at_ms),
    reason: row.reason,
    approver_roles: row.approver_roles,
    approval_id: row.approval_id,
    approval_expires_at: num(row.approval_expires_at_ms),
    order_id: row.order_id,
    published_at: num(row.published_at_ms),
    carried_headers: row.carried_headers,
    request_proof: row.request_proof,
    decision_seal: row.decision_seal,
    now: Number(row.now_ms),
  };
}

export interface ApproveChange {
  readonly identity: string;
  readonly decider: Decider;
  readonly roles: readonly string[];
  readonly decisionId: string;
  readonly approvalId: string;
  readonly orderId: string;
  readonly validityMs: number;
  /** The approval service's seal over the request as read and this decision (DecisionPublisher.sealOf). */
  readonly seal: DecisionSeal;
}

export interface RejectChange {
  readonly identity: string;
  readonly decider: Decider;
  readonly reason: string;
  readonly decisionId: string;
}

export interface ListQuery {
  readonly tenants: readonly string[];
  readonly state: ApprovalState;
  readonly limit: number;
}

/**
 * The requests table. Every change of state is one conditional UPDATE on `state = 'pending' AND
 * expires_at > now()`, so racing approvers (or an approver racing the expiry) yield one decision.
 * Times come from the database's clock, shared by every instance.
 */
export class RequestRepository {
  private readonly t: Tables;

  constructor(
    private readonly pool: Pool,
    schema: string,
  ) {
    this.t = tablesIn(schema);
  }

  /** Stores a new pending request; false when the proposal is already known. */
  async insert(request: ApprovalRequest, proof: Readonly<Record<string, string>>, carried?: CarriedHeaders): Promise<boolean> {
    const result = await this.pool.query(
      `INSERT INTO ${this.t.requests}
         (proposal_id, tenant, run_id, principal, tool, approver_role, arguments_sha256, request, state,
          command_id, command_ids, requested_at, expires_at, carried_headers, request_proof)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9, ARRAY[$9], to_timestamp($10 / 1000.0), to_timestamp($11 / 1000.0), $12, $13)
       ON CONFLICT (proposal_id) DO NOTHING`,
      [
        request.proposal_id,
        request.tenant,
        request.run_id,
        request.principal,
        request.tool,
        request.approver_role,
        request.arguments_sha256,
        JSON.stringify(request),
        request.command_id,
        request.requested_at,
        request.expires_at,
        carried === undefined ? null : JSON.stringify(carried),
        JSON.stringify(proof),
      ],
    );
    return result.rowCount === 1;
  }

  async get(proposalId: string): Promise<StoredRequest | undefined> {
    const result = await this.pool.query<Row>(`SELECT ${COLUMNS} FROM ${this.t.requests} WHERE proposal_id = $1`, [proposalId]);
    const row = result.rows[0];
    return row === undefined ? undefined : toStored(row);
  }

  /** Requests of the given tenants in one state, newest first. */
  async list(query: ListQuery): Promise<StoredRequest[]> {
    const result = await this.pool.query<Row>(
      `SELECT ${COLUMNS} FROM ${this.t.requests}
        WHERE tenant = ANY($1) AND state = $2
        ORDER BY requested_at DESC, proposal_id DESC LIMIT $3`,
      [query.tenants, query.state, query.limit],
    );
    return result.rows.map(toStored);
  }

  /** A pending request now answers `commandId` (the agent re-sent its commit); undefined if not pending or already seen. */
  async waitOn(proposalId: string, commandId: string, carried?: CarriedHeaders): Promise<StoredRequest | undefined> {
    const result = await this.pool.query<Row>(
      `UPDATE ${this.t.requests} SET command_id = $2, command_ids = array_append(command_ids, $2), carried_headers = $3
        WHERE proposal_id = $1 AND state = 'pending' AND NOT ($2 = ANY(command_ids))
        RETURNING ${COLUMNS}`,
      [proposalId, commandId, carried === undefined ? null : JSON.stringify(carried)],
    );
    const row = result.rows[0];
    return row === undefined ? undefined : toStored(row);
  }

  /** Records that `commandId` of a decided request has been answered. */
  async noteAnswered(proposalId: string, commandId: string): Promise<void> {
    await this.pool.query(
      `UPDATE ${this.t.requests} SET command_ids = array_append(command_ids, $2)
        WHERE proposal_id = $1 AND NOT ($2 = ANY(command_ids))`,
      [proposalId, commandId],
    );
  }

  /** pending → approved, if still pending and unexpired; claims the publishing of the decision. */
  async approve(proposalId: string, change: ApproveChange): Promise<StoredRequest | undefined> {
    const result = await this.pool.query<Row>(
      `UPDATE ${this.t.requests}
          SET state = 'approved', decided_by = $2, decided_at = now(), approver_roles = $3, decision_id = $4,
              approval_id = $5, order_id = $6,
              approval_expires_at = LEAST(now() + make_interval(secs => $7 / 1000.0), expires_at),
              publish_claimed_at = now(), decider = $8, decision_seal = $9
        WHERE proposal_id = $1 AND state = 'pending' AND expires_at > now()
        RETURNING ${COLUMNS}`,
      [
        proposalId,
        change.identity,
        change.roles,
        change.decisionId,
        change.approvalId,
        change.orderId,
        change.validityMs,
        JSON.stringify(change.decider),
        JSON.stringify(change.seal),
      ],
    );
    const row = result.rows[0];
    return row === undefined ? undefined : toStored(row);
  }

  /** pending → rejected with a reason, if still pending and unexpired. */
  async reject(proposalId: string, change: RejectChange): Promise<StoredRequest | undefined> {
    const result = await this.pool.query<Row>(
      `UPDATE ${this.t.requests}
          SET state = 'rejected', decided_by = $2, decided_at = now(), reason = $3, decision_id = $4, publish_claimed_at = now(), decider = $5
        WHERE proposal_id = $1 AND state = 'pending' AND expires_at > now()
        RETURNING ${COLUMNS}`,
      [proposalId, change.identity, change.reason, change.decisionId, JSON.stringify(change.decider)],
    );
    const row = result.rows[0];
    return row === undefined ? undefined : toStored(row);
  }

  /** Runs that have pending requests (at most `limit`), for the sweeper's check that they are still active. */
  async runsWithPending(limit: number): Promise<string[]> {
    const result = await this.pool.query<{ run_id: string }>(
      `SELECT DISTINCT run_id FROM ${this.t.requests} WHERE state = 'pending' AND expires_at > now() LIMIT $1`,
      [limit],
    );
    return result.rows.map((row) => row.run_id);
  }

  /**
   * Withdraws every pending request of a run that was stopped (or has expired): each becomes
   * `rejected` by `gatehouse`, the reason saying so, and its refusal goes to the agent.
   */
  async withdrawRun(runId: string, reason: string): Promise<StoredRequest[]> {
    const result = await this.pool.query<Row>(
      `UPDATE ${this.t.requests}
          SET state = 'rejected', decided_by = 'gatehouse', decided_at = now(), reason = $2, publish_claimed_at = now(),
              decision_id = 'dec_' || replace(gen_random_uuid()::text, '-', '')
        WHERE run_id = $1 AND state = 'pending'
        RETURNING ${COLUMNS}`,
      [runId, reason],
    );
    return result.rows.map(toStored);
  }

  /** Expires up to `limit` pending requests whose time ran out. Silence is never consent. */
  async expireDue(limit: number): Promise<StoredRequest[]> {
    const result = await this.pool.query<Row>(
      `UPDATE ${this.t.requests}
          SET state = 'expired', decided_at = now(), publish_claimed_at = now(),
              decision_id = 'dec_' || replace(gen_random_uuid()::text, '-', '')
        WHERE proposal_id IN (
          SELECT proposal_id FROM ${this.t.requests}
           WHERE state = 'pending' AND expires_at <= now()
           ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
          AND state = 'pending'
        RETURNING ${COLUMNS}`,
      [limit],
    );
    return result.rows.map(toStored);
  }

  /**
   * The outbox: decided requests whose events were not confirmed published and whose last claim is
   * older than `staleMs` (its publisher died or failed). Claims them again for this caller.
   */
  async claimUnpublished(staleMs: number, limit: number): Promise<StoredRequest[]> {
    const result = await this.pool.query<Row>(
      `UPDATE ${this.t.requests} SET publish_claimed_at = now()
        WHERE proposal_id IN (
          SELECT proposal_id FROM ${this.t.requests}
           WHERE state <> 'pending' AND published_at IS NULL
             AND (publish_claimed_at IS NULL OR publish_claimed_at < now() - make_interval(secs => $1 / 1000.0))
           ORDER BY decided_at LIMIT $2 FOR UPDATE SKIP LOCKED)
        RETURNING ${COLUMNS}`,
      [staleMs, limit],
    );
    return result.rows.map(toStored);
  }

  async markPublished(proposalId: string): Promise<void> {
    await this.pool.query(`UPDATE ${this.t.requests} SET published_at = now() WHERE proposal_id = $1 AND published_at IS NULL`, [
      proposalId,
    ]);
  }

  async ping(): Promise<boolean> {
    await this.pool.query('SELECT 1');
    return true;
  }
}
