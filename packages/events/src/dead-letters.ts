import type { OutboundRecord, ReadRecord, RecordHeaders } from './wire-record.js';
import { dlqTopicOf } from './topics.js';

/** Headers a DLQ record carries beside the original key, value and headers. */
export const DLQ_HEADER = {
  reason: 'gatehouse-dlq-reason',
  message: 'gatehouse-dlq-message',
  originTopic: 'gatehouse-dlq-origin-topic',
  originPartition: 'gatehouse-dlq-origin-partition',
  originOffset: 'gatehouse-dlq-origin-offset',
  originTimestamp: 'gatehouse-dlq-origin-timestamp',
  deadAt: 'gatehouse-dlq-dead-at',
} as const;

export interface OriginRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly timestamp: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: RecordHeaders | undefined;
}

/** The record `message` of `topic`'s `partition`, as a dead letter names its origin. */
export function originOf(topic: string, partition: number, message: ReadRecord): OriginRecord {
  const { offset, timestamp, key, value, headers } = message;
  return { topic, partition, offset, timestamp, key, value, headers };
}

/** Where dead letters are written: a service's EventPublisher (its batches, its recovery after a failed send). */
export interface DeadLetterSink {
  sendRaw(topic: string, messages: OutboundRecord[]): Promise<void>;
}

/** Routes records a consumer cannot use to `<topic>.dlq`, byte for byte, with the reason in headers. */
export class DeadLetters {
  constructor(private readonly sink: DeadLetterSink) {}

  async send(origin: OriginRecord, reason: string, message: string): Promise<void> {
    const topic = dlqTopicOf(origin.topic);
    const messages: OutboundRecord[] = [
      {
        key: origin.key,
        value: origin.value,
        headers: {
          ...originalHeaders(origin.headers),
          [DLQ_HEADER.reason]: reason,
          [DLQ_HEADER.message]: message,
          [DLQ_HEADER.originTopic]: origin.topic,
          [DLQ_HEADER.originPartition]: String(origin.partition),
          [DLQ_HEADER.originOffset]: origin.offset,
          [DLQ_HEADER.originTimestamp]: origin.timestamp,
          [DLQ_HEADER.deadAt]: String(Date.now()),
        },
      },
    ];
    await this.sink.sendRaw(topic, messages);
  }
}

/**
 * The original headers, keeping only what Kafka can carry (strings and bytes). A hostile record can
 * name a header `__proto__` or `constructor`; decoded into a plain object such a name drags in an
 * inherited function, which would make the DLQ send itself fail and the record retry forever.
 */
function originalHeaders(headers: RecordHeaders | undefined): RecordHeaders {
  const kept = Object.create(null) as RecordHeaders;
  if (headers === undefined) return kept;
  for (const name of Object.keys(headers)) {
    const value: unknown = headers[name];
    const values = Array.isArray(value) ? (value as unknown[]) : [value];
    const carried = values.filter((v): v is string | Buffer => typeof v === 'string' || Buffer.isBuffer(v));
    if (carried.length === 0) continue;
    kept[name] = Array.isArray(value) ? carried : carried[0];
  }
  return kept;
}
