import type { Consumer, IHeaders, Kafka, KafkaMessage } from 'kafkajs';
import type { Logger } from '@gatehouse/telemetry';
import { originOf } from './dead-letters.js';
import type { DeadLetters, OriginRecord } from './dead-letters.js';
import { deadLetterUntrusted } from './record-trust.js';
import type { RecordTrust } from './record-trust.js';
import type { EventSerde } from './serde.js';
import type { EventByRole, TopicRole } from './topics.js';

export interface ConsumedRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: string | null;
  readonly timestamp: string;
  readonly headers: IHeaders | undefined;
  /** The record as it arrived, for a handler that dead-letters an event it decoded but will not act on. */
  readonly origin?: OriginRecord;
}

export type EventHandler<R extends TopicRole> = (event: EventByRole[R], record: ConsumedRecord) => Promise<void>;

export interface EventConsumerOptions<R extends TopicRole> {
  readonly kafka: Kafka;
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
  readonly consumer: Consumer;
  /** Settles when this member first receives its partition assignment. */
  readonly joined: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Consumes one Gatehouse topic as a member of a consumer group. Each record is decoded against the
 * topic's schema; a record that does not decode goes to `<topic>.dlq` with its reason and the
 * consumer carries on. A handler error or an unreachable registry fails the batch, which kafkajs
 * retries from the last committed offset, so nothing is skipped.
 */
export async function startEventConsumer<R extends TopicRole>(options: EventConsumerOptions<R>): Promise<RunningConsumer> {
  const { kafka, serde, role, handle, deadLetters } = options;
  const topic = serde.topics[role];
  const log = options.logger.child({ topic, groupId: options.groupId });
  const consumer = kafka.consumer({
    groupId: options.groupId,
    allowAutoTopicCreation: false,
    sessionTimeout: options.sessionTimeoutMs ?? 30_000,
    heartbeatInterval: 3_000,
  });
  let onJoin: () => void = () => undefined;
  const joined = new Promise<void>((resolve) => (onJoin = resolve));
  consumer.on(consumer.events.GROUP_JOIN, () => onJoin());

  const take = async (partition: number, message: KafkaMessage): Promise<void> => {
    const origin = originOf(topic, partition, message);
    const record: ConsumedRecord = {
      topic,
      partition,
      offset: message.offset,
      key: message.key === null ? null : message.key.toString('utf8'),
      timestamp: message.timestamp,
      headers: message.headers,
      origin,
    };
    const decoded = await serde.decode(role, message.value);
    if (decoded.ok) {
      if (await deadLetterUntrusted(role, decoded.value, origin, options.trust, deadLetters, log)) return;
      await handle(decoded.value, record);
      return;
    }
    await deadLetters.send(origin, decoded.reason, decoded.message);
    log.warn({ partition, offset: message.offset, reason: decoded.reason }, 'undecodable record sent to the DLQ');
  };

  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: options.fromBeginning ?? false });
  await consumer.run({
    eachBatchAutoResolve: false,
    eachBatch: async (payload) => {
      const { batch } = payload;
      for (const message of batch.messages) {
        if (!payload.isRunning() || payload.isStale()) break;
        await take(batch.partition, message);
        payload.resolveOffset(message.offset);
        await payload.heartbeat();
      }
      await payload.commitOffsetsIfNecessary();
    },
  });
  return {
    consumer,
    joined,
    stop: () => consumer.disconnect(),
  };
}
