/**
 * Signed events. Only the policy service and the approval service may order an execution, only the
 * policy service may ask people to approve, only the approval service may decide, and an answer to
 * an agent comes from the service that published it. Every such event carries an Ed25519
 * signature by its issuer in Kafka record headers, leaving the Avro schemas as they are, and every
 * reader checks it against the public keys of the roles that may issue that kind of event.
 *
 * What travels beside an event and decides where its answers go (the reply partition) is signed
 * with it: a copy re-addressed to another agent-runtime instance no longer verifies.
 *
 * Cost, CPU time per call over 20,000 of each with ~200 bytes of arguments and of result (Node 20.20,
 * OpenSSL 3.0, this project's 2-core machine; `node bench/dist/signing-cost.js`): signing an order
 * ≈ 39 µs, `verifyOrder` ≈ 104 µs, signing a result ≈ 38 µs, `verifyResult` ≈ 101 µs. Nearly all of
 * it is the Ed25519 operations; the canonical payload is ≈ 8 µs.
 */

import { sign, verify } from 'node:crypto';
import { canonicalJson, sha256Hex } from '@gatehouse/contracts';
import { replyPartitionOf } from '@gatehouse/telemetry';
import {
  BATCH_PROOF_HEADER,
  batchTree,
  MAX_BATCH_LEAVES,
  rememberVerifiedRoot,
  rootAlreadyVerified,
  rootOf,
  rootSigningBytes,
} from './batch-signing.js';
import type {
  ApprovalDecision,
  ApprovalGrant,
  ApprovalRequest,
  ExecutionOrder,
  OperatorHandoff,
  Person,
  ToolResult,
} from './event-types.js';
import { KEY_ID, strictBase64 } from './signing-keys.js';
import type { KeyRing, KeyRole, SigningKey } from './signing-keys.js';
import type { EventByRole, TopicRole } from './topics.js';
import type { RecordHeaders } from './wire-record.js';

export const SIGNATURE_HEADER = 'gatehouse-signature';
export const KEY_ID_HEADER = 'gatehouse-key-id';

// Signed bytes start with what they are, so a signature over one kind of event can never be
// replayed as a signature over another kind (or over a later version of the same kind).
const ORDER_PREFIX = 'gatehouse.execution-order.v2\n';
const REQUEST_PREFIX = 'gatehouse.approval-request.v1\n';
const DECISION_PREFIX = 'gatehouse.approval-decision.v1\n';
// The same kinds with the person they concern signed too. An event that names no person is signed
// as before, so readers of the earlier version still verify it; one that names a person can only be
// verified by a reader that knows these.
const ORDER_WITH_PERSON_PREFIX = 'gatehouse.execution-order.v3\n';
// An order that names the contract it was decided under signs it, with the person (or null).
const ORDER_WITH_CONTRACT_PREFIX = 'gatehouse.execution-order.v4\n';
const REQUEST_WITH_PERSON_PREFIX = 'gatehouse.approval-request.v2\n';
const DECISION_WITH_DECIDER_PREFIX = 'gatehouse.approval-decision.v2\n';
const RESULT_PREFIX = 'gatehouse.tool-result.v1\n';
const HANDOFF_PREFIX = 'gatehouse.operator-handoff.v1\n';

const ED25519_SIGNATURE_BYTES = 64;

/** The topics whose events are signed, and the roles that may sign each. */
export const SIGNED_BY = {
  execute: ['policy', 'approval'],
  approvalsRequested: ['policy'],
  approvalsDecided: ['approval'],
  results: ['policy', 'approval', 'executor'],
  operator: ['executor'],
} as const satisfies Partial<Record<TopicRole, readonly KeyRole[]>>;
export type SignedRole = keyof typeof SIGNED_BY;

export function isSignedRole(role: TopicRole): role is SignedRole {
  return Object.hasOwn(SIGNED_BY, role);
}

export type SignatureRefusal = 'unsigned' | 'unknown_key' | 'wrong_role' | 'bad_signature' | 'arguments_altered' | 'expired' | 'stale';

export type SignatureCheck =
  | { readonly ok: true; readonly keyId: string; readonly role: KeyRole }
  | { readonly ok: false; readonly reason: SignatureRefusal; readonly detail: string };

/** Headers as a consumer hands them over (Buffers, possibly repeated), or plain strings. */
export type SignedHeaders = Readonly<RecordHeaders>;

// The grant's fields are picked one by one, as the order's are: a field a later schema adds must
// not change what an older reader verifies until both sides sign it on purpose (a new prefix).
function signedGrant(grant: ApprovalGrant | null): Record<string, unknown> | null {
  if (grant === null) return null;
  return {
    approval_id: grant.approval_id,
    approved_by: grant.approved_by,
    approved_at: grant.approved_at,
    expires_at: grant.expires_at,
    arguments_sha256: grant.arguments_sha256,
    target_version: grant.target_version,
  };
}

function payloadOf(prefix: string, signed: Record<string, unknown>): Buffer {
  return Buffer.from(prefix + canonicalJson(signed), 'utf8');
}

function signedPerson(person: Person): Record<string, unknown> {
  return { issuer: person.issuer, subject: person.subject, name: person.name };
}

/** The payload as signed before people were named, or with the person under the next prefix. */
function withPerson(earlier: string, next: string, signed: Record<string, unknown>, person: Person | null | undefined): Buffer {
  if (person === null || person === undefined) return payloadOf(earlier, signed);
  return payloadOf(next, { ...signed, on_behalf_of: signedPerson(person) });
}

/**
 * The bytes an issuer signs for an order: the domain prefix, then RFC 8785 canonical JSON of a fixed
 * field list and the reply partition its answers go to. `arguments` itself is left out (it can be
 * large); its hash is signed and the verifier re-hashes. Throws CanonicalJsonError for an order
 * JSON cannot represent (e.g. a field left undefined).
 */
export function orderSigningPayload(order: ExecutionOrder, replyPartition: number | null): Buffer {
  const signed = {
    order_id: order.order_id,
    command_id: order.command_id,
    run_id: order.run_id,
    tenant: order.tenant,
    principal: order.principal,
    environment: order.environment,
    tool: order.tool,
    effect: order.effect,
    arguments_sha256: order.arguments_sha256,
    proposal_id: order.proposal_id,
    approval_id: order.approval?.approval_id ?? null,
    approval: signedGrant(order.approval),
    idempotency_key: order.idempotency_key,
    deadline_at: order.deadline_at,
    issued_at: order.issued_at,
    reply_partition: replyPartition,
  };
  const contract = order.contract_sha256 ?? null;
  if (contract === null) return withPerson(ORDER_PREFIX, ORDER_WITH_PERSON_PREFIX, signed, order.on_behalf_of);
  const person = order.on_behalf_of ?? null;
  return payloadOf(ORDER_WITH_CONTRACT_PREFIX, {
    ...signed,
    on_behalf_of: person === null ? null : signedPerson(person),
    contract_sha256: contract,
  });
}

/**
 * The bytes the policy service signs for an approval request: everything a person is shown and
 * decides on (the target, the effect, the diff), what the decision's order will carry, and the reply
 * partition its answers go to. `arguments` is covered by its hash, as in an order.
 */
export function requestSigningPayload(request: ApprovalRequest, replyPartition: number | null): Buffer {
  const { diff } = request;
  const signed = {
    proposal_id: request.proposal_id,
    command_id: request.command_id,
    run_id: request.run_id,
    tenant: request.tenant,
    principal: request.principal,
    environment: request.environment,
    tool: request.tool,
    arguments_sha256: request.arguments_sha256,
    target: { type: request.target.type, id: request.target.id, version: request.target.version },
    effect: request.effect,
    diff: {
      changes: diff.changes.map((c) => ({ field: c.field, before: c.before, after: c.after })),
      recipients: [...diff.recipients],
      amount: diff.amount === null ? null : { minor: diff.amount.minor, currency: diff.amount.currency },
      affected_records: diff.affected_records,
      irreversible: [...diff.irreversible],
    },
    approver_role: request.approver_role,
    rule_id: request.rule_id,
    requested_at: request.requested_at,
    expires_at: request.expires_at,
    reply_partition: replyPartition,
  };
  const person = request.on_behalf_of ?? null;
  const recent = request.recent_sign_in_s ?? null;
  // What a later version added is signed under its prefix; a request with neither is signed as before.
  if (person === null && recent === null) return payloadOf(REQUEST_PREFIX, signed);
  return payloadOf(REQUEST_WITH_PERSON_PREFIX, {
    ...signed,
    on_behalf_of: person === null ? null : signedPerson(person),
    recent_sign_in_s: recent,
  });
}

/** The bytes the approval service signs for an `ApprovalDecision`: every field, picked one by one. */
export function decisionSigningPayload(decision: ApprovalDecision): Buffer {
  const signed = {
    decision_id: decision.decision_id,
    proposal_id: decision.proposal_id,
    command_id: decision.command_id,
    run_id: decision.run_id,
    tenant: decision.tenant,
    tool: decision.tool,
    decision: decision.decision,
    decided_by: decision.decided_by,
    decided_at: decision.decided_at,
    reason: decision.reason,
    arguments_sha256: decision.arguments_sha256,
    target_type: decision.target_type,
    target_id: decision.target_id,
    target_version: decision.target_version,
    approval_expires_at: decision.approval_expires_at,
  };
  const { decider } = decision;
  if (decider === null || decider === undefined) return payloadOf(DECISION_PREFIX, signed);
  return payloadOf(DECISION_WITH_DECIDER_PREFIX, {
    ...signed,
    decider: { issuer: decider.issuer, subject: decider.subject, name: decider.name, auth_time: decider.auth_time },
  });
}

/** The bytes a service signs for a `ToolResult` it publishes (an operator's resolution included): every field. */
export function resultSigningPayload(result: ToolResult): Buffer {
  const { error, pending } = result;
  return payloadOf(RESULT_PREFIX, {
    command_id: result.command_id,
    run_id: result.run_id,
    tenant: result.tenant,
    tool: result.tool,
    status: result.status,
    operation_id: result.operation_id,
    result: result.result,
    error:
      error === null
        ? null
        : {
            code: error.code,
            message: error.message,
            retryable: error.retryable,
            field: error.field,
            permitted: [...error.permitted],
            next: error.next,
            retry_after_ms: error.retry_after_ms,
            details: error.details,
          },
    pending:
      pending === null ? null : { proposal_id: pending.proposal_id, approver_role: pending.approver_role, expires_at: pending.expires_at },
    arguments_sha256: result.arguments_sha256,
    completed_at: result.completed_at,
    duration_ms: result.duration_ms,
  });
}

/** The bytes an executor signs for an `OperatorHandoff`: what an operator is asked to establish, every field. */
export function handoffSigningPayload(handoff: OperatorHandoff): Buffer {
  return payloadOf(HANDOFF_PREFIX, {
    handoff_id: handoff.handoff_id,
    command_id: handoff.command_id,
    run_id: handoff.run_id,
    tenant: handoff.tenant,
    tool: handoff.tool,
    proposal_id: handoff.proposal_id,
    idempotency_key: handoff.idempotency_key,
    arguments_sha256: handoff.arguments_sha256,
    reason: handoff.reason,
    last_error: handoff.last_error,
    executor: handoff.executor,
    detected_at: handoff.detected_at,
  });
}

/** The payload of an event of a signed topic, given the headers it travels with. */
function signingPayload<R extends SignedRole>(role: R, event: EventByRole[R], headers: SignedHeaders | undefined): Buffer {
  const replyPartition = replyPartitionOf(headers) ?? null;
  switch (role) {
    case 'execute':
      return orderSigningPayload(event as ExecutionOrder, replyPartition);
    case 'approvalsRequested':
      return requestSigningPayload(event as ApprovalRequest, replyPartition);
    case 'approvalsDecided':
      return decisionSigningPayload(event as ApprovalDecision);
    case 'operator':
      return handoffSigningPayload(event as OperatorHandoff);
    default:
      return resultSigningPayload(event as ToolResult);
  }
}

/** Signs what one service publishes. */
export class EventSigner {
  readonly keyId: string;
  private readonly privateKey: SigningKey['privateKey'];

  constructor(key: SigningKey) {
    this.keyId = key.keyId;
    this.privateKey = key.privateKey;
  }

  /**
   * The signature headers for an event of `role` published with `headers` (whose reply partition is
   * signed with orders and approval requests); none for a topic whose events are not signed.
   */
  headersFor<R extends TopicRole>(role: R, event: EventByRole[R], headers?: SignedHeaders): Record<string, string> {
    if (!isSignedRole(role)) return {};
    return this.headersOver(signingPayload(role, event as EventByRole[typeof role], headers));
  }

  /**
   * The signature headers for events sent together, given their signing payloads (`payloadFor`):
   * one event is signed alone, as `headersFor` does; more share one signature per
   * MAX_BATCH_LEAVES, over the root of a Merkle tree, each with its path to that root.
   */
  headersForBatch(payloads: readonly Buffer[]): Record<string, string>[] {
    const headers: Record<string, string>[] = [];
    for (let start = 0; start < payloads.length; start += MAX_BATCH_LEAVES) {
      const group = payloads.slice(start, start + MAX_BATCH_LEAVES);
      if (group.length === 1) {
        headers.push(this.headersOver(group[0] as Buffer));
        continue;
      }
      const { root, proofs } = batchTree(group);
      const signature = sign(null, rootSigningBytes(root), this.privateKey).toString('base64');
      for (const proof of proofs) headers.push({ [SIGNATURE_HEADER]: signature, [KEY_ID_HEADER]: this.keyId, [BATCH_PROOF_HEADER]: proof });
    }
    return headers;
  }

  /** The signature headers over `payload` alone (what verifyPayload checks). */
  headersOver(payload: Buffer): Record<string, string> {
    const signature = sign(null, payload, this.privateKey);
    return { [SIGNATURE_HEADER]: signature.toString('base64'), [KEY_ID_HEADER]: this.keyId };
  }
}

/** What is signed for an event of `role` published with `headers`; undefined for a topic whose events are not signed. */
export function payloadFor<R extends TopicRole>(role: R, event: EventByRole[R], headers?: SignedHeaders): Buffer | undefined {
  return isSignedRole(role) ? signingPayload(role, event as EventByRole[typeof role], headers) : undefined;
}

export type HeaderValue =
  { readonly kind: 'absent' } | { readonly kind: 'conflicting'; readonly count: number } | { readonly kind: 'one'; readonly text: string };

/**
 * One header's value as text. Kafka allows a header name to repeat (its values then come as an array):
 * identical repeats are harmless, differing ones are refused rather than picking one of them.
 * Own properties only: a hostile record may name a header `__proto__` or `constructor`.
 */
export function headerValue(headers: SignedHeaders | undefined, name: string): HeaderValue {
  if (headers === undefined || !Object.hasOwn(headers, name)) return { kind: 'absent' };
  const raw: unknown = headers[name];
  const values = Array.isArray(raw) ? (raw as unknown[]) : [raw];
  const texts = new Set<string>();
  for (const value of values) {
    if (typeof value === 'string') texts.add(value);
    else if (Buffer.isBuffer(value)) texts.add(value.toString('utf8'));
  }
  texts.delete('');
  if (texts.size === 0) return { kind: 'absent' };
  if (texts.size > 1) return { kind: 'conflicting', count: texts.size };
  const [text] = texts;
  return text === undefined ? { kind: 'absent' } : { kind: 'one', text };
}

function refuse(reason: SignatureRefusal, detail: string): SignatureCheck {
  return { ok: false, reason, detail };
}

// A key id comes from the record, so it is echoed only when it has the shape of one.
export function describeKeyId(keyId: string): string {
  return KEY_ID.test(keyId) ? `"${keyId}"` : 'a malformed key id';
}

export function signatureBytes(text: string): Buffer | undefined {
  const bytes = strictBase64(text);
  return bytes?.length === ED25519_SIGNATURE_BYTES ? bytes : undefined;
}

/**
 * Signed at all, by a key id of the ring, held by a role that may issue events of `role`, with a
 * valid signature over the event and the headers that travel with it. Never throws on what a
 * record carries.
 */
export function verifySigned<R extends SignedRole>(
  role: R,
  event: EventByRole[R],
  headers: SignedHeaders | undefined,
  ring: KeyRing,
): SignatureCheck {
  return verifyPayload(`the ${role} event`, SIGNED_BY[role], () => signingPayload(role, event, headers), headers, ring);
}

/**
 * Whether `headers` carry a valid signature, by a key of the ring held by one of `allowed`, over
 * the bytes `payload` makes (made only once the headers are found well formed; `what` names the
 * signed thing in refusals, as `the decision seal`). Never throws on what the headers carry.
 */
export function verifyPayload(
  what: string,
  allowed: readonly KeyRole[],
  payload: () => Buffer,
  headers: SignedHeaders | undefined,
  ring: KeyRing,
): SignatureCheck {
  const signatureHeader = headerValue(headers, SIGNATURE_HEADER);
  const keyIdHeader = headerValue(headers, KEY_ID_HEADER);
  if (signatureHeader.kind === 'absent') return refuse('unsigned', `no ${SIGNATURE_HEADER} header`);
  if (keyIdHeader.kind === 'absent') return refuse('unsigned', `no ${KEY_ID_HEADER} header`);
  if (keyIdHeader.kind === 'conflicting') return refuse('unknown_key', `${keyIdHeader.count} different ${KEY_ID_HEADER} headers`);
  if (signatureHeader.kind === 'conflicting')
    return refuse('bad_signature', `${signatureHeader.count} different ${SIGNATURE_HEADER} headers`);

  const keyId = keyIdHeader.text;
  const held = ring.get(keyId);
  if (held === undefined) return refuse('unknown_key', `key id ${describeKeyId(keyId)} is not trusted`);
  if (!allowed.includes(held.role))
    return refuse(
      'wrong_role',
      `key id "${keyId}" is the ${held.role} service's; ${what} is signed by the ${allowed.join(' or ')} service`,
    );

  const signature = signatureBytes(signatureHeader.text);
  if (signature === undefined)
    return refuse('bad_signature', `${SIGNATURE_HEADER} is not base64 of a ${ED25519_SIGNATURE_BYTES}-byte Ed25519 signature`);

  let signed: Buffer;
  try {
    signed = payload();
  } catch (error) {
    // No issuer could have signed something without a canonical form.
    return refuse('bad_signature', `${what} has no signable form: ${error instanceof Error ? error.message : String(error)}`);
  }
  const proofHeader = headerValue(headers, BATCH_PROOF_HEADER);
  if (proofHeader.kind === 'conflicting') return refuse('bad_signature', `${proofHeader.count} different ${BATCH_PROOF_HEADER} headers`);
  if (proofHeader.kind === 'absent') {
    if (!verify(null, signed, held.key, signature))
      return refuse('bad_signature', `the signature does not match ${what} under key id "${keyId}"`);
    return { ok: true, keyId, role: held.role };
  }
  // Signed with the others of its batch: the path must lead to a root this key signed.
  const root = rootOf(signed, proofHeader.text);
  if (root === undefined) return refuse('bad_signature', `${BATCH_PROOF_HEADER} is not a path of a signed batch`);
  if (!rootAlreadyVerified(ring, keyId, signature, root)) {
    if (!verify(null, rootSigningBytes(root), held.key, signature))
      return refuse('bad_signature', `the signature does not match the batch of ${what} under key id "${keyId}"`);
    rememberVerifiedRoot(ring, keyId, signature, root);
  }
  return { ok: true, keyId, role: held.role };
}

/**
 * Whether an executor may run `order`, given the headers it was consumed with. The checks run in
 * order: signed, by a key of the policy or approval service, signature valid over the order and its
 * reply partition, arguments matching their signed hash (`arguments` is not in the payload, so a
 * valid signature says nothing about them), deadline not passed.
 */
export function verifyOrder(
  order: ExecutionOrder,
  headers: SignedHeaders | undefined,
  ring: KeyRing,
  now: number = Date.now(),
): SignatureCheck {
  const signed = verifySigned('execute', order, headers, ring);
  if (!signed.ok) return signed;
  if (sha256Hex(order.arguments) !== order.arguments_sha256)
    return refuse('arguments_altered', 'the arguments do not hash to the signed arguments_sha256');
  if (order.deadline_at !== null && order.deadline_at < now) {
    return refuse('expired', `deadline_at ${order.deadline_at} passed ${now - order.deadline_at} ms ago`);
  }
  return signed;
}

/** Whether an approval request was signed by the policy service, over the arguments it carries. */
export function verifyRequest(request: ApprovalRequest, headers: SignedHeaders | undefined, ring: KeyRing): SignatureCheck {
  const signed = verifySigned('approvalsRequested', request, headers, ring);
  if (!signed.ok) return signed;
  if (sha256Hex(request.arguments) !== request.arguments_sha256)
    return refuse('arguments_altered', 'the arguments do not hash to the signed arguments_sha256');
  return signed;
}

/** Whether an approval decision was signed by the approval service. */
export function verifyDecision(decision: ApprovalDecision, headers: SignedHeaders | undefined, ring: KeyRing): SignatureCheck {
  return verifySigned('approvalsDecided', decision, headers, ring);
}

/** Whether a result was signed by the service that may have published it (policy, approval or an executor). */
export function verifyResult(result: ToolResult, headers: SignedHeaders | undefined, ring: KeyRing): SignatureCheck {
  return verifySigned('results', result, headers, ring);
}

/** Whether an operator handoff was signed by an executor. */
export function verifyHandoff(handoff: OperatorHandoff, headers: SignedHeaders | undefined, ring: KeyRing): SignatureCheck {
  return verifySigned('operator', handoff, headers, ring);
}

/** The check a reader of `role` makes of each record before anything acts on it. */
export function verifyEvent<R extends SignedRole>(
  role: R,
  event: EventByRole[R],
  headers: SignedHeaders | undefined,
  ring: KeyRing,
): SignatureCheck {
  switch (role) {
    case 'execute':
      // Deadlines are judged where the order is handled (a late order is answered TIMEOUT).
      return verifyOrder(event as ExecutionOrder, headers, ring, Number.NEGATIVE_INFINITY);
    case 'approvalsRequested':
      return verifyRequest(event as ApprovalRequest, headers, ring);
    default:
      return verifySigned(role, event, headers, ring);
  }
}
