import type { Logger } from '@gatehouse/telemetry';
import type { DeadLetters } from './dead-letters.js';
import type { EventHandler } from './event-handler.js';
import type { KafkaConnection } from './kafka-client.js';
import { startParallelConsumer } from './parallel-consumer.js';
import type { RecordTrust } from './record-trust.js';
import type { EventSerde } from './serde.js';
import type { TopicRole } from './topics.js';

export interface EventConsumerOptions<R extends TopicRole> {
  readonly kafka: KafkaConnection;
  readonly serde: EventSerde;
  readonly role: R;
  readonly groupId: string;
  readonly handle: EventHandler<R>;
  readonly deadLetters: DeadLetters;
  readonly logger: Logger;
  /** For a signed topic: only records a trusted key of the right role signed reach `handle`; the rest go to the DLQ. */
  readonly trust?: RecordTrust;
  readonly fromBeginning?: boolean;
  readonly sessionTimeoutMs?: number;
}

export interface RunningConsumer {
  /** Settles when this member first receives its partition assignment. */
  readonly joined: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Consumes one Gatehouse topic as a member of a consumer group, one record at a time in the order
 * fetched. Each record is decoded against the topic's schema; a record that does not decode goes to
 * `<topic>.dlq` with its reason and the consumer carries on. A handler error or an unreachable
 * registry is retried with backoff, and offsets are committed only past handled records, so nothing
 * is skipped.
 */
export async function startEventConsumer<R extends TopicRole>(options: EventConsumerOptions<R>): Promise<RunningConsumer> {
  const running = await startParallelConsumer({ ...options, maxConcurrency: 1, maxPerKey: 1 });
  return { joined: running.joined, stop: () => running.stop() };
}
