import { DeadLetters, isSignedRole, startParallelConsumer } from '@gatehouse/events';
import type { EventHandler, KeyRing, ParallelConsumerStats, TopicRole } from '@gatehouse/events';
import { startConsumerLag } from '@gatehouse/telemetry';
import type { GatehouseMetrics, Logger } from '@gatehouse/telemetry';
import type { EventRuntime } from './event-runtime.js';
import type { StopOptions } from './teardown.js';

/** How soon a group notices a dead member and hands its partitions to the others, in every service. */
export const DEFAULT_SESSION_TIMEOUT_MS = 10_000;
/** How long a stop lets records already running finish, unless told otherwise. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 10_000;

/** What a service may tune of its consumer; the rest is the same for every service. */
export interface ConsumerSettings {
  /** Records running at once across all keys (the parallel consumer's 64 when absent). */
  readonly maxConcurrency?: number | undefined;
  /** Records of one key (a tenant) running at once (the parallel consumer's 8 when absent). */
  readonly maxPerKey?: number | undefined;
  /** Default DEFAULT_SESSION_TIMEOUT_MS. */
  readonly sessionTimeoutMs?: number | undefined;
}

/** The consumer options every service shares, with a service's settings applied. */
export interface ConsumerTuning {
  readonly fromBeginning: true;
  readonly sessionTimeoutMs: number;
  readonly maxConcurrency?: number;
  readonly maxPerKey?: number;
}

export function consumerTuning(settings: ConsumerSettings): ConsumerTuning {
  return {
    // A new group starts at the beginning: nothing published before its first member joined is skipped.
    fromBeginning: true,
    sessionTimeoutMs: settings.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS,
    ...(settings.maxConcurrency === undefined ? {} : { maxConcurrency: settings.maxConcurrency }),
    ...(settings.maxPerKey === undefined ? {} : { maxPerKey: settings.maxPerKey }),
  };
}

export interface ConsumptionOptions<R extends TopicRole> extends ConsumerSettings {
  readonly runtime: Pick<EventRuntime, 'kafka' | 'admin' | 'serde' | 'publisher'>;
  readonly role: R;
  readonly groupId: string;
  readonly handle: EventHandler<R>;
  readonly logger: Logger;
  /** Where the group's lag on the topic is reported. */
  readonly metrics: GatehouseMetrics;
  /**
   * For a signed topic: the keys whose records `handle` may see. The rest go to the topic's DLQ and
   * are counted (`gatehouse_untrusted_orders_total`, `gatehouse_untrusted_records_total`).
   */
  readonly trust?: { readonly keys: KeyRing; readonly answeredRetentionMs?: number };
}

/** A service's group membership on one topic, with its dead letters and its lag. */
export interface Consumption {
  /** Settles when this member first receives its partitions. */
  readonly joined: Promise<void>;
  /** True from then on, across later rebalances. */
  readonly hasJoined: () => boolean;
  readonly stats: () => ParallelConsumerStats;
  /** Stops measuring lag, stops fetching, lets running records finish (bounded) and leaves the group. */
  readonly stop: (options?: StopOptions) => Promise<void>;
}

/**
 * Joins `groupId` on the topic of `role`: records run through `handle` in parallel across keys,
 * undecodable ones go to the topic's DLQ, and the group's lag is measured every 5 s.
 */
export async function startConsumption<R extends TopicRole>(options: ConsumptionOptions<R>): Promise<Consumption> {
  const { runtime, groupId, logger } = options;
  // A service that acts on a signed topic without checking would act on anyone's records.
  if (isSignedRole(options.role) && options.trust === undefined)
    throw new Error(`a consumer of ${options.role} must be given the keys to check what it reads`);
  const consumer = await startParallelConsumer({
    kafka: runtime.kafka,
    serde: runtime.serde,
    role: options.role,
    groupId,
    handle: options.handle,
    deadLetters: new DeadLetters(runtime.publisher),
    logger,
    ...(options.trust === undefined
      ? {}
      : { trust: { ...options.trust, refused: (reason: string) => options.metrics.untrustedRecord(options.role, reason) } }),
    ...consumerTuning(options),
  });
  let joined = false;
  const joining = Date.now();
  // A group that takes long to join says so, every 30 s, until it has.
  const slow = setInterval(
    () => logger.warn({ group: groupId, waited_ms: Date.now() - joining }, 'still joining the consumer group'),
    30_000,
  );
  slow.unref();
  void consumer.joined
    .then(() => {
      joined = true;
      logger.info({ group: groupId, ms: Date.now() - joining }, 'consumer group joined');
    })
    .catch(() => undefined)
    .finally(() => clearInterval(slow));
  const lag = startConsumerLag({
    admin: runtime.admin,
    groupId,
    topics: [runtime.serde.topics[options.role]],
    metrics: options.metrics,
    logger,
  });
  return {
    joined: consumer.joined,
    hasJoined: () => joined,
    stats: () => consumer.stats(),
    stop: async ({ drainTimeoutMs = DEFAULT_DRAIN_TIMEOUT_MS } = {}) => {
      clearInterval(slow);
      lag.stop();
      await consumer.stop({ drainTimeoutMs });
    },
  };
}
