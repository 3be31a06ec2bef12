import { randomBytes } from 'node:crypto';

/** Kafka record headers as kafkajs types them (`IHeaders`), without depending on kafkajs. */
export type RecordHeaders = Readonly<Record<string, Buffer | string | readonly (Buffer | string)[] | undefined>>;

/** Headers a service copies from the record it handles to every event that record causes. */
export type CarriedHeaders = Record<string, string>;

export const TRACEPARENT_HEADER = 'traceparent';
export const TRACESTATE_HEADER = 'tracestate';
/** When the runtime sent the command (epoch ms, decimal), set by the policy service from `sent_at`. */
export const SENT_AT_HEADER = 'gatehouse-sent-at';
/**
 * The results partition the agent-runtime instance behind a command reads (decimal), set by the
 * client; every result the command causes is published to that partition.
 */
export const REPLY_PARTITION_HEADER = 'gatehouse-reply-partition';

// W3C Trace Context: version 00, a 16-byte trace id and an 8-byte parent id, neither all zeros.
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
const ZEROS = /^0+$/;
/** The W3C limit on `tracestate`; a longer one is dropped, never truncated. */
const TRACESTATE_MAX = 512;

function text(value: RecordHeaders[string]): string | undefined {
  const first = Array.isArray(value) ? (value as readonly (Buffer | string)[])[0] : (value as Buffer | string | undefined);
  if (first === undefined) return undefined;
  return typeof first === 'string' ? first : first.toString('utf8');
}

/** A fresh `traceparent` (version 00, sampled) for a call that starts a trace. */
export function newTraceparent(): string {
  for (;;) {
    const traceId = randomBytes(16).toString('hex');
    const spanId = randomBytes(8).toString('hex');
    if (!ZEROS.test(traceId) && !ZEROS.test(spanId)) return `00-${traceId}-${spanId}-01`;
  }
}

/** The trace id of a well-formed `traceparent` header value; undefined for anything else. */
export function traceIdOfTraceparent(traceparent: string | undefined): string | undefined {
  const match = traceparent === undefined ? null : TRACEPARENT.exec(traceparent);
  const traceId = match?.[1];
  const spanId = match?.[2];
  if (traceId === undefined || spanId === undefined || ZEROS.test(traceId) || ZEROS.test(spanId)) return undefined;
  return traceId;
}

/** The trace id a record carries, for log lines; undefined when it carries no valid `traceparent`. */
export function traceIdOf(headers: RecordHeaders | undefined): string | undefined {
  return traceIdOfTraceparent(text(headers?.[TRACEPARENT_HEADER]));
}

/** When the command behind a record was sent (epoch ms), if the policy service stamped it. */
export function sentAtOf(headers: RecordHeaders | undefined): number | undefined {
  const raw = text(headers?.[SENT_AT_HEADER]);
  if (raw === undefined || !/^[0-9]{1,15}$/.test(raw)) return undefined;
  return Number(raw);
}

/** The reply partition a record carries; undefined unless it is a small decimal number. */
export function replyPartitionOf(headers: RecordHeaders | undefined): number | undefined {
  const raw = text(headers?.[REPLY_PARTITION_HEADER]);
  if (raw === undefined || !/^[0-9]{1,5}$/.test(raw)) return undefined;
  return Number(raw);
}

/**
 * The headers that travel from a record to every event it causes: a valid `traceparent` (with its
 * `tracestate`), the reply partition and the command's send time. `sentAt` replaces any carried send time (the policy
 * service stamps it from the command it checked). Undefined when there is nothing to carry.
 */
export function carriedHeaders(headers: RecordHeaders | undefined, sentAt?: number): CarriedHeaders | undefined {
  const carried: CarriedHeaders = {};
  const traceparent = text(headers?.[TRACEPARENT_HEADER]);
  if (traceIdOfTraceparent(traceparent) !== undefined && traceparent !== undefined) {
    carried[TRACEPARENT_HEADER] = traceparent;
    const tracestate = text(headers?.[TRACESTATE_HEADER]);
    if (tracestate !== undefined && tracestate.length <= TRACESTATE_MAX) carried[TRACESTATE_HEADER] = tracestate;
  }
  const replyPartition = replyPartitionOf(headers);
  if (replyPartition !== undefined) carried[REPLY_PARTITION_HEADER] = String(replyPartition);
  const stamp = sentAt ?? sentAtOf(headers);
  if (stamp !== undefined && Number.isSafeInteger(stamp) && stamp >= 0) carried[SENT_AT_HEADER] = String(stamp);
  return Object.keys(carried).length === 0 ? undefined : carried;
}
