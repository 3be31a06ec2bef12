import type { IHeaders, Kafka, Producer } from 'kafkajs';
import type { EventSerde } from './serde.js';
import type { EventByRole, TopicRole } from './topics.js';

export interface Outgoing<R extends TopicRole> {
  readonly key: string;
  readonly event: EventByRole[R];
  readonly headers?: IHeaders;
}

/** Typed, idempotent publishing of Gatehouse events (acks from all in-sync replicas). */
export class EventPublisher {
  private constructor(
    readonly producer: Producer,
    private readonly serde: EventSerde,
  ) {}

  static async connect(kafka: Kafka, serde: EventSerde): Promise<EventPublisher> {
    const producer = kafka.producer({ idempotent: true, allowAutoTopicCreation: false });
    await producer.connect();
    return new EventPublisher(producer, serde);
  }

  async publish<R extends TopicRole>(role: R, key: string, event: EventByRole[R], headers?: IHeaders): Promise<void> {
    await this.publishMany(role, [headers === undefined ? { key, event } : { key, event, headers }]);
  }

  async publishMany<R extends TopicRole>(role: R, entries: readonly Outgoing<R>[]): Promise<void> {
    if (entries.length === 0) return;
    await this.producer.send({
      topic: this.serde.topics[role],
      acks: -1,
      messages: entries.map((e) => ({
        key: e.key,
        value: this.serde.encode(role, e.event),
        ...(e.headers === undefined ? {} : { headers: e.headers }),
      })),
    });
  }

  async disconnect(): Promise<void> {
    await this.producer.disconnect();
  }
}
