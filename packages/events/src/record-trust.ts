import { createHash } from 'node:crypto';
import type { Logger } from '@gatehouse/telemetry';
import type { DeadLetters, OriginRecord } from './dead-letters.js';
import type { ExecutionOrder } from './event-types.js';
import { isSignedRole, verifyEvent } from './event-signing.js';
import type { SignatureCheck, SignatureRefusal, SignedHeaders } from './event-signing.js';
import type { KeyRing } from './signing-keys.js';
import type { EventByRole, TopicRole } from './topics.js';

/**
 * How far the issuer's clock (`issued_at`) and the reader's may disagree: an order is refused as
 * stale this much before its reader's memory of answered commands would run out, and an order
 * issued further than this in the future is refused too.
 */
export const ORDER_CLOCK_MARGIN_MS = 10 * 60 * 1000;

/**
 * What a reader of a signed topic trusts. A record that fails the check never reaches the handler:
 * it goes to the topic's DLQ with the reason and is counted, and nothing is published under the
 * ids it names (whoever wrote it chose them).
 */
export interface RecordTrust {
  readonly keys: KeyRing;
  /**
   * How long the reader remembers the commands it answered (its idempotency records' retention).
   * Orders issued longer ago than this, less ORDER_CLOCK_MARGIN_MS, are refused as `stale`: an
   * older copy could be answered twice.
   */
  readonly answeredRetentionMs?: number;
  /** Called once for every record refused. */
  readonly refused?: (reason: SignatureRefusal) => void;
}

/** The DLQ reason of a record refused by its signature check. */
export function untrustedReason(reason: SignatureRefusal): string {
  return `untrusted_${reason}`;
}

/** The check a reader of `role` makes before its handler sees the record; always ok for a topic that is not signed. */
export function checkRecord<R extends TopicRole>(
  role: R,
  event: EventByRole[R],
  headers: SignedHeaders | undefined,
  trust: RecordTrust,
  now = Date.now(),
): SignatureCheck | undefined {
  if (!isSignedRole(role)) return undefined;
  const check = verifyEvent(role, event as EventByRole[typeof role], headers, trust.keys);
  if (!check.ok || role !== 'execute' || trust.answeredRetentionMs === undefined) return check;
  const issuedAt = (event as ExecutionOrder).issued_at;
  const maxAgeMs = trust.answeredRetentionMs - ORDER_CLOCK_MARGIN_MS;
  if (issuedAt < now - maxAgeMs) {
    return {
      ok: false,
      reason: 'stale',
      detail: `issued ${now - issuedAt} ms ago, past the ${maxAgeMs} ms within which an answered command is surely remembered`,
    };
  }
  if (issuedAt > now + ORDER_CLOCK_MARGIN_MS) {
    return {
      ok: false,
      reason: 'stale',
      detail: `issued ${issuedAt - now} ms in the future by this reader's clock, more than the ${ORDER_CLOCK_MARGIN_MS} ms clocks may disagree`,
    };
  }
  return check;
}

/** What a log line may say of a refused record: the hash of its bytes, never the bytes. */
export function recordSha256(value: Buffer | null): string {
  return createHash('sha256')
    .update(value ?? Buffer.alloc(0))
    .digest('hex');
}

/**
 * For a reader of a signed topic: true when the record is refused, after it has gone to the DLQ with
 * its reason, been counted and logged by hash. Nothing may then act on it or answer for it.
 */
export async function deadLetterUntrusted<R extends TopicRole>(
  role: R,
  event: EventByRole[R],
  origin: OriginRecord,
  trust: RecordTrust | undefined,
  deadLetters: DeadLetters,
  log: Logger,
): Promise<boolean> {
  const check = trust === undefined ? undefined : checkRecord(role, event, origin.headers, trust);
  if (check === undefined || check.ok) return false;
  await deadLetters.send(origin, untrustedReason(check.reason), check.detail);
  trust?.refused?.(check.reason);
  log.warn(
    { partition: origin.partition, offset: origin.offset, reason: check.reason, record_sha256: recordSha256(origin.value) },
    'record no trusted key vouches for sent to the DLQ; nothing acts on it',
  );
  return true;
}
