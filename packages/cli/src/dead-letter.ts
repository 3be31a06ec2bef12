import { DLQ_HEADER } from '@gatehouse/events';
import type { ReadRecord, RecordHeaders } from '@gatehouse/events';

/** One record of a `<topic>.dlq`, with what DeadLetters wrote in its headers. */
export interface DeadLetter {
  readonly dlqTopic: string;
  readonly partition: number;
  readonly offset: string;
  /** When the DLQ record was written (Kafka timestamp, ms). */
  readonly timestamp: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: RecordHeaders;
  readonly reason: string | null;
  readonly message: string | null;
  readonly originTopic: string | null;
  readonly originPartition: number | null;
  readonly originOffset: string | null;
  readonly deadAt: number | null;
}

/** Every DeadLetters header starts so; a replay strips them and keeps the record's own headers. */
const DLQ_HEADER_PREFIX = 'gatehouse-dlq-';

function text(value: RecordHeaders[string]): string | null {
  const first = Array.isArray(value) ? value[0] : value;
  if (first === undefined) return null;
  return Buffer.isBuffer(first) ? first.toString('utf8') : first;
}

function int(value: string | null): number | null {
  const n = value === null ? Number.NaN : Number(value);
  return Number.isSafeInteger(n) ? n : null;
}

export function deadLetterOf(dlqTopic: string, partition: number, message: ReadRecord): DeadLetter {
  const headers = message.headers ?? {};
  return {
    dlqTopic,
    partition,
    offset: message.offset,
    timestamp: Number(message.timestamp),
    key: message.key,
    value: message.value,
    headers,
    reason: text(headers[DLQ_HEADER.reason]),
    message: text(headers[DLQ_HEADER.message]),
    originTopic: text(headers[DLQ_HEADER.originTopic]),
    originPartition: int(text(headers[DLQ_HEADER.originPartition])),
    originOffset: text(headers[DLQ_HEADER.originOffset]),
    deadAt: int(text(headers[DLQ_HEADER.deadAt])),
  };
}

/** The headers the record had before it was dead-lettered. */
export function originalHeaders(record: DeadLetter): RecordHeaders {
  return Object.fromEntries(Object.entries(record.headers).filter(([name]) => !name.startsWith(DLQ_HEADER_PREFIX)));
}

/** What --json shows of a dead letter: never the value (it may hold raw tool arguments), only its size. */
export function deadLetterView(record: DeadLetter, now: number): Record<string, unknown> {
  const at = record.deadAt ?? record.timestamp;
  return {
    dlq_topic: record.dlqTopic,
    dlq_partition: record.partition,
    dlq_offset: record.offset,
    origin_topic: record.originTopic,
    origin_partition: record.originPartition,
    origin_offset: record.originOffset,
    reason: record.reason,
    message: record.message,
    key: record.key?.toString('utf8') ?? null,
    size: record.value?.length ?? 0,
    dead_at: new Date(at).toISOString(),
    age_ms: Math.max(0, now - at),
  };
}
