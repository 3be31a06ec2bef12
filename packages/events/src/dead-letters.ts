import type { IHeaders, Producer } from 'kafkajs';
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
  readonly headers: IHeaders | undefined;
}

/** Routes records a consumer cannot use to `<topic>.dlq`, byte for byte, with the reason in headers. */
export class DeadLetters {
  constructor(private readonly producer: Producer) {}

  async send(origin: OriginRecord, reason: string, message: string): Promise<void> {
    await this.producer.send({
      topic: dlqTopicOf(origin.topic),
      acks: -1,
      messages: [
        {
          key: origin.key,
          value: origin.value,
          headers: {
            ...(origin.headers ?? {}),
            [DLQ_HEADER.reason]: reason,
            [DLQ_HEADER.message]: message,
            [DLQ_HEADER.originTopic]: origin.topic,
            [DLQ_HEADER.originPartition]: String(origin.partition),
            [DLQ_HEADER.originOffset]: origin.offset,
            [DLQ_HEADER.originTimestamp]: origin.timestamp,
            [DLQ_HEADER.deadAt]: String(Date.now()),
          },
        },
      ],
    });
  }
}
