import type { Logger } from './logger.js';
import type { GatehouseMetrics } from './metrics.js';

/** The two admin calls the lag needs; a connected `KafkaAdmin` of @gatehouse/events is one. */
export interface LagAdmin {
  topicOffsets(topic: string): Promise<readonly { readonly partition: number; readonly high: string; readonly low: string }[]>;
  committedOffsets(
    groupId: string,
    topics: readonly string[],
  ): Promise<readonly { readonly topic: string; readonly partition: number; readonly offset: string }[]>;
}

export interface ConsumerLagOptions {
  /** Connected; the caller disconnects it after `stop()`. */
  readonly admin: LagAdmin;
  readonly groupId: string;
  readonly topics: readonly string[];
  readonly metrics: GatehouseMetrics;
  readonly logger: Logger;
  /** Default 5 s. */
  readonly intervalMs?: number;
}

export interface RunningConsumerLag {
  /** Measures now (what the timer does every interval). */
  measure(): Promise<void>;
  stop(): void;
}

/**
 * Measures a group's lag on its topics every interval: each partition's log end offset minus the
 * group's committed offset (the whole retained log, from its start, while nothing is committed).
 */
export function startConsumerLag(options: ConsumerLagOptions): RunningConsumerLag {
  const { admin, groupId, metrics } = options;
  const log = options.logger.child({ component: 'consumer-lag', groupId });
  let failing = false;

  const measure = async (): Promise<void> => {
    try {
      const committed = await admin.committedOffsets(groupId, options.topics);
      for (const topic of options.topics) {
        const byPartition = new Map(committed.filter((c) => c.topic === topic).map((c) => [c.partition, Number(c.offset)]));
        for (const { partition, high, low } of await admin.topicOffsets(topic)) {
          const offset = byPartition.get(partition) ?? -1;
          const from = offset < 0 ? Number(low) : offset;
          metrics.consumerLag(groupId, topic, partition, Math.max(0, Number(high) - from));
        }
      }
      failing = false;
    } catch (error) {
      // One line per outage, not one per interval.
      if (!failing) log.warn({ err: error }, 'consumer lag could not be measured');
      failing = true;
    }
  };

  const timer = setInterval(() => void measure(), options.intervalMs ?? 5_000);
  timer.unref();
  void measure();
  return { measure, stop: () => clearInterval(timer) };
}
