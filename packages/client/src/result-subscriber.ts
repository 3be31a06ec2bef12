import { DeadLetters, EventPublisher, startEventConsumer } from '@gatehouse/events';
import type { ConsumedRecord, EventSerde, KafkaConnection, KeyRing, RunningConsumer, ToolResult } from '@gatehouse/events';
import type { Logger } from '@gatehouse/telemetry';
import { resultKeysFromEnv } from './result-keys.js';

export interface ResultSubscription {
  stop(): Promise<void>;
  readonly joined: Promise<void>;
}

/**
 * For downstream services that want every result: a consumer group over gatehouse.results. Each
 * group sees every result once; results carry command_id for de-duplication after a crash. Only
 * results a Gatehouse service signed reach `handle`: the rest go to the results DLQ, as they do for
 * agents (`resultKeys`, default GATEHOUSE_POLICY_KEYS, GATEHOUSE_APPROVAL_KEYS, GATEHOUSE_EXECUTOR_KEYS).
 */
export async function subscribeResults(options: {
  /** `createKafka(eventsConfigFromEnv(), clientId)` of @gatehouse/events. */
  readonly kafka: KafkaConnection;
  readonly serde: EventSerde;
  readonly groupId: string;
  readonly logger: Logger;
  readonly fromBeginning?: boolean;
  readonly resultKeys?: KeyRing;
  /** Called for every result refused, with the reason (for a subscriber's own metric). */
  readonly onUntrusted?: (reason: string) => void;
  readonly handle: (result: ToolResult, record: ConsumedRecord) => Promise<void>;
}): Promise<ResultSubscription> {
  const keys = options.resultKeys ?? resultKeysFromEnv();
  const publisher = await EventPublisher.connect(options.kafka, options.serde);
  const running: RunningConsumer = await startEventConsumer({
    kafka: options.kafka,
    serde: options.serde,
    role: 'results',
    groupId: options.groupId,
    handle: options.handle,
    deadLetters: new DeadLetters(publisher),
    logger: options.logger,
    trust: { keys, ...(options.onUntrusted === undefined ? {} : { refused: options.onUntrusted }) },
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
