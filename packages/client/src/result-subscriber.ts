import { DeadLetters, EventPublisher, startEventConsumer } from '@gatehouse/events';
import type { ConsumedRecord, EventSerde, RunningConsumer, ToolResult } from '@gatehouse/events';
import type { Kafka } from 'kafkajs';
import type { Logger } from '@gatehouse/telemetry';

export interface ResultSubscription {
  stop(): Promise<void>;
  readonly joined: Promise<void>;
}

/**
 * For downstream services that want every result: a consumer group over gatehouse.results. Each
 * group sees every result once; results carry command_id for de-duplication after a crash.
 */
export async function subscribeResults(options: {
  readonly kafka: Kafka;
  readonly serde: EventSerde;
  readonly groupId: string;
  readonly logger: Logger;
  readonly fromBeginning?: boolean;
  readonly handle: (result: ToolResult, record: ConsumedRecord) => Promise<void>;
}): Promise<ResultSubscription> {
  const publisher = await EventPublisher.connect(options.kafka, options.serde);
  const running: RunningConsumer = await startEventConsumer({
    kafka: options.kafka,
    serde: options.serde,
    role: 'results',
    groupId: options.groupId,
    handle: options.handle,
    deadLetters: new DeadLetters(publisher),
    logger: options.logger,
    fromBeginning: options.fromBeginning ?? false,
  });
  return {
    joined: running.joined,
    stop: async () => {
      await running.stop();
      await publisher.disconnect();
    },
  };
}
