import { randomBytes } from 'node:crypto';
import { isSelfApproval } from '@gatehouse/governance';
import type { GatehouseMetrics, Logger } from '@gatehouse/telemetry';
import type { Approver } from './approvers.js';
import { WITHDRAWN_REASON } from './decision-events.js';
import type { DecisionPublisher } from './decision-publisher.js';
import { ids } from './decision-publisher.js';
import type { ApprovalState, Decider, RequestRepository, StoredRequest } from './request-repository.js';
import type { RunIsActive } from './sweeper.js';

/** A refusal of an approver's action, as the HTTP API answers it. */
export interface DecisionRefusal {
  readonly status: 400 | 401 | 403 | 404 | 409;
  readonly code: string;
  readonly message: string;
  /** The request's current state, on a 409. */
  readonly state?: ApprovalState;
  /** On STEP_UP_REQUIRED: where to sign in again, and within how many seconds that must have been. */
  readonly signIn?: string;
  readonly maxAge?: number;
}

/**
 * Whether a rule's recent sign-in holds for this approver now: true when the request asks for none,
 * or the IdP says they signed in within its seconds. A bearer token without `auth_time`, or a demo
 * token, never satisfies one.
 */
export function signedInRecently(approver: Approver, row: StoredRequest, now: number): boolean {
  const within = row.request.recent_sign_in_s ?? null;
  if (within === null) return true;
  if (approver.authTime === null) return false;
  // In whole seconds, as `auth_time` is and as the IdP checks `max_age`: a check in milliseconds
  // sends a person whom the IdP still counts as recent back to it, and it returns them unasked.
  return Math.floor(now / 1000) - Math.floor(approver.authTime / 1000) <= within;
}

export type DecisionOutcome =
  { readonly ok: true; readonly row: StoredRequest; readonly published: boolean } | { readonly ok: false; readonly error: DecisionRefusal };

export const REASON_MAX = 500;

/**
 * What the deciding person was shown, sent back with their decision: the stored request's
 * `arguments_sha256` and `target.version`. A decision is taken on what was seen, never on an id alone.
 */
export interface ShownProposal {
  readonly arguments_sha256: string;
  readonly target_version: number | null;
}

const fail = (error: DecisionRefusal): DecisionOutcome => ({ ok: false, error });
const notFound = (): DecisionOutcome => fail({ status: 404, code: 'NOT_FOUND', message: 'no such approval request' });

const randomId = (prefix: string): string => `${prefix}_${randomBytes(12).toString('hex')}`;

/** How the decision record names the person: the IdP's issuer and subject, with name and sign-in time. */
function deciderOf(approver: Approver): Decider {
  return { issuer: approver.issuer, subject: approver.subject, name: approver.name, auth_time: approver.authTime };
}

/** Whether `approver` may see the request at all: another tenant's request does not exist for them. */
export function visibleTo(approver: Approver, row: StoredRequest): boolean {
  return approver.tenants.includes(row.tenant);
}

/** Why `approver` may not decide on a request they can see, or undefined when they may. */
export function authorityProblem(approver: Approver, row: StoredRequest): DecisionRefusal | undefined {
  const role = row.request.approver_role;
  if (!approver.roles.includes(role)) {
    return { status: 403, code: 'UNAUTHORIZED_APPROVER', message: `approving this proposal requires the role ${role}` };
  }
  // Four eyes by IdP identity only (issuer and subject): never by a name or a principal string.
  if (isSelfApproval(row.request.on_behalf_of, approver)) {
    return { status: 403, code: 'SELF_APPROVAL', message: 'the person this run acts on behalf of cannot decide on its own proposal' };
  }
  return undefined;
}

/** Why a decision on `shown` may not stand for the stored request, or undefined when it is what the person saw. */
function mismatchProblem(row: StoredRequest, shown: ShownProposal): DecisionRefusal | undefined {
  const stored = row.request;
  if (shown.arguments_sha256 === stored.arguments_sha256 && shown.target_version === stored.target.version) return undefined;
  return {
    status: 409,
    code: 'PROPOSAL_MISMATCH',
    message: 'what was shown differs from the stored proposal (arguments_sha256 or target version); reload it and decide again',
  };
}

function stateProblem(row: StoredRequest): DecisionRefusal | undefined {
  if (row.state === 'expired' || (row.state === 'pending' && row.expires_at <= row.now)) {
    return {
      status: 409,
      code: 'APPROVAL_EXPIRED',
      message: 'the request expired unanswered; the agent must propose anew',
      state: 'expired',
    };
  }
  if (row.state !== 'pending') {
    return { status: 409, code: 'NOT_PENDING', message: `the request is already ${row.state}`, state: row.state };
  }
  return undefined;
}

/**
 * What an approver can do to a request: check authority, record the decision with one conditional
 * UPDATE, then publish what it causes. The decision stands once committed; a publish that fails is
 * retried by the outbox, never undone.
 */
export class ApprovalDecisions {
  constructor(
    private readonly repository: RequestRepository,
    private readonly publisher: DecisionPublisher,
    private readonly validityMs: number,
    private readonly logger: Logger,
    private readonly metrics?: GatehouseMetrics,
    /** Stopping a run withdraws its pending requests: nobody can approve them afterwards. */
    private readonly runIsActive?: RunIsActive,
  ) {}

  async approve(approver: Approver, proposalId: string, shown: ShownProposal): Promise<DecisionOutcome> {
    const checked = await this.check(approver, proposalId, shown);
    if (!checked.ok) return checked;
    if (!signedInRecently(approver, checked.row, checked.row.now)) {
      const maxAge = checked.row.request.recent_sign_in_s ?? 0;
      this.metrics?.identityRefused('approval', 'STEP_UP_REQUIRED');
      this.logger.info(
        { ...ids(checked.row), approver: approver.identity, max_age: maxAge },
        'approval refused until the approver signs in again',
      );
      return fail({
        status: 401,
        code: 'STEP_UP_REQUIRED',
        message: `approving this proposal needs a sign-in at the identity provider within the last ${maxAge} s`,
        // Back from the IdP the console shows the proposal again; the person must press Approve again.
        signIn: `/login?max_age=${maxAge}&return=${encodeURIComponent(`/#proposal=${proposalId}`)}`,
        maxAge,
      });
    }
    const decision = {
      identity: approver.identity,
      decider: deciderOf(approver),
      roles: approver.roles,
      decisionId: randomId('dec'),
      approvalId: randomId('apr'),
      orderId: randomId('ord'),
    };
    const row = await this.repository.approve(proposalId, {
      ...decision,
      validityMs: this.validityMs,
      // Sealed over the request as checked: a row changed in between no longer matches its seal.
      seal: this.publisher.sealOf(checked.row, decision),
    });
    if (row === undefined) return this.lostRace(proposalId);
    this.metrics?.approvalDecision(row.request.tool, row.state);
    this.logger.info({ ...ids(row), approved_by: approver.identity, approval_id: row.approval_id }, 'approved');
    return { ok: true, row, published: await this.publish(row) };
  }

  async reject(approver: Approver, proposalId: string, shown: ShownProposal, reason: string): Promise<DecisionOutcome> {
    const trimmed = reason.trim();
    if (trimmed.length === 0 || trimmed.length > REASON_MAX) {
      return fail({ status: 400, code: 'INVALID_REQUEST', message: `a rejection needs a reason of 1..${REASON_MAX} characters` });
    }
    const checked = await this.check(approver, proposalId, shown);
    if (!checked.ok) return checked;
    const row = await this.repository.reject(proposalId, {
      identity: approver.identity,
      decider: deciderOf(approver),
      reason: trimmed,
      decisionId: randomId('dec'),
    });
    if (row === undefined) return this.lostRace(proposalId);
    this.metrics?.approvalDecision(row.request.tool, row.state);
    this.logger.info({ ...ids(row), rejected_by: approver.identity, decision_id: row.decision_id }, 'rejected');
    return { ok: true, row, published: await this.publish(row) };
  }

  private async check(approver: Approver, proposalId: string, shown: ShownProposal): Promise<DecisionOutcome> {
    const row = await this.repository.get(proposalId);
    if (row === undefined) return notFound();
    if (!visibleTo(approver, row)) {
      this.metrics?.identityRefused('approval', 'OTHER_TENANT');
      return notFound();
    }
    // What the person saw is checked before anything is recorded (or a step-up asked for).
    const problem = authorityProblem(approver, row) ?? stateProblem(row) ?? mismatchProblem(row, shown) ?? this.unverified(row);
    if (problem !== undefined) {
      this.logger.info({ ...ids(row), approver: approver.identity, code: problem.code }, 'decision refused');
      return fail(problem);
    }
    if (this.runIsActive !== undefined && !(await this.runIsActive(row.request.run_id))) {
      // The sweeper withdraws these within a tick; a person who got there first must not approve.
      const withdrawn = await this.repository.withdrawRun(row.request.run_id, WITHDRAWN_REASON);
      for (const each of withdrawn) await this.publish(each);
      this.logger.info(
        { ...ids(row), approver: approver.identity },
        'decision refused: the run is no longer active; its requests are withdrawn',
      );
      return fail({
        status: 409,
        code: 'RUN_NOT_FOUND',
        message: `the run ${row.request.run_id} was stopped or has expired; its requests are withdrawn`,
        state: 'rejected',
      });
    }
    return { ok: true, row, published: false };
  }

  /** A request the policy service's signature no longer covers is decided by nobody. */
  private unverified(row: StoredRequest): DecisionRefusal | undefined {
    const detail = this.publisher.untrusted(row);
    if (detail === undefined) return undefined;
    return {
      status: 409,
      code: 'REQUEST_UNVERIFIED',
      message: `the stored request is not the one the policy service signed (${detail}); nobody can decide it`,
    };
  }

  /** The conditional UPDATE matched nothing: someone else decided, or the request lapsed, in between. */
  private async lostRace(proposalId: string): Promise<DecisionOutcome> {
    const row = await this.repository.get(proposalId);
    if (row === undefined) return notFound();
    return fail(stateProblem(row) ?? { status: 409, code: 'NOT_PENDING', message: 'the request changed meanwhile', state: row.state });
  }

  private async publish(row: StoredRequest): Promise<boolean> {
    try {
      await this.publisher.publish(row);
      return true;
    } catch (error) {
      this.logger.error({ err: error, ...ids(row), decision: row.state }, 'decision recorded but not yet published; the outbox retries it');
      return false;
    }
  }
}
