/**
 * The approval service's seal on a person's approval, made when they decide and kept with the
 * decision in its database. What publishes the decision afterwards (the outbox, a re-sent commit's
 * answer) signs and sends an order only for a stored approval whose seal verifies, over a request
 * whose policy-service signature verifies: whoever can write the approval schema, but holds no key
 * of the approval service, cannot approve without a person, and cannot change what a person
 * approved.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '@gatehouse/contracts';
import { KEY_ID_HEADER, requestSigningPayload, SIGNATURE_HEADER, verifyPayload } from './event-signing.js';
import type { EventSigner, SignatureCheck, SignedHeaders } from './event-signing.js';
import type { ApprovalRequest, Decider } from './event-types.js';
import type { KeyRing } from './signing-keys.js';
import { BATCH_PROOF_HEADER } from './batch-signing.js';
import { REPLY_PARTITION_HEADER } from '@gatehouse/telemetry';

const SEAL_PREFIX = 'gatehouse.approval-seal.v1\n';

/** An approval as decided: the request a person was shown (as the policy service signed it) and who decided. */
export interface SealedApproval {
  readonly request: ApprovalRequest;
  readonly decision_id: string;
  readonly approval_id: string;
  readonly order_id: string;
  readonly decided_by: string;
  readonly decider: Decider | null;
  readonly approver_roles: readonly string[];
}

/** A seal as stored: the signature headers over the approval's seal payload. */
export type DecisionSeal = Readonly<Record<string, string>>;

/** The bytes sealed: every field of the approval, the request by the sha256 of its signed form. */
function decisionSealPayload(approval: SealedApproval): Buffer {
  const request = createHash('sha256').update(requestSigningPayload(approval.request, null)).digest('hex');
  const { decider } = approval;
  const sealed = {
    proposal_id: approval.request.proposal_id,
    request_sha256: request,
    decision_id: approval.decision_id,
    approval_id: approval.approval_id,
    order_id: approval.order_id,
    decided_by: approval.decided_by,
    decider:
      decider === null ? null : { issuer: decider.issuer, subject: decider.subject, name: decider.name, auth_time: decider.auth_time },
    approver_roles: [...approval.approver_roles],
  };
  return Buffer.concat([Buffer.from(SEAL_PREFIX, 'utf8'), Buffer.from(canonicalJson(sealed), 'utf8')]);
}

/** Seals an approval with the approval service's key. */
export function sealDecision(signer: EventSigner, approval: SealedApproval): DecisionSeal {
  return signer.headersOver(decisionSealPayload(approval));
}

/** Whether `seal` is the approval service's over `approval`. Never throws on what a row holds. */
export function verifyDecisionSeal(approval: SealedApproval, seal: SignedHeaders | undefined, ring: KeyRing): SignatureCheck {
  return verifyPayload('the decision seal', ['approval'], () => decisionSealPayload(approval), seal, ring);
}

/**
 * What of a request's record headers its policy-service signature needs (the signature, its key id,
 * a batch path, the reply partition), kept with the stored request so that `verifyRequest` can check
 * it again whenever the request is read back.
 */
export function requestProofOf(headers: SignedHeaders | undefined): Record<string, string> {
  const proof: Record<string, string> = {};
  for (const name of [SIGNATURE_HEADER, KEY_ID_HEADER, BATCH_PROOF_HEADER, REPLY_PARTITION_HEADER]) {
    const value = headers?.[name];
    const text = Buffer.isBuffer(value) ? value.toString('utf8') : typeof value === 'string' ? value : undefined;
    if (text !== undefined) proof[name] = text;
  }
  return proof;
}
