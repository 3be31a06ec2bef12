import { createKafka, DeadLetters, EventPublisher, EventSerde, provisionTopics, startParallelConsumer } from '@gatehouse/events';
import type { EventsConfig, ParallelConsumerStats, Topics } from '@gatehouse/events';
import type { Catalog, ToolImplementation } from '@gatehouse/contracts';
import { ApprovalStore, IdempotencyStore, Keyspace, ProposalStore, ResourceLock, SlotPool } from '@gatehouse/state';
import type { Redis } from '@gatehouse/state';
import type { Logger } from '@gatehouse/telemetry';
import { orderHandler } from './order-handler.js';
import type { SlotLimits } from './write-path.js';

export interface ExecutorServiceOptions {
  readonly events: EventsConfig;
  readonly topics: Topics;
  readonly redis: Redis;
  readonly redisPrefix: string;
  readonly catalog: Catalog;
  readonly implementations: readonly ToolImplementation[];
  readonly logger: Logger;
  readonly executorId: string;
  readonly groupId: string;
  readonly concurrency: number;
  readonly perTenantConcurrency: number;
  readonly leaseMs: number;
  readonly proposalTtlMs: number;
  readonly limits?: SlotLimits;
  /** How soon the group notices a dead executor (default 10 s). */
  readonly sessionTimeoutMs?: number;
}

export interface RunningExecutor {
  readonly joined: Promise<void>;
  stats(): ParallelConsumerStats;
  stop(options?: { readonly drainTimeoutMs?: number }): Promise<void>;
}

/** Wires an executor: one member of the executors' consumer group on gatehouse.execute. */
export async function startExecutor(options: ExecutorServiceOptions): Promise<RunningExecutor> {
  const logger = options.logger.child({ executor: options.executorId });
  const kafka = createKafka(options.events, `gatehouse-executor-${options.executorId}`, logger);
  const admin = kafka.admin();
  await admin.connect();
  await provisionTopics(admin, options.topics, options.events.topicSettings);
  await admin.disconnect();
  const serde = new EventSerde({ registryUrl: options.events.registryUrl, topics: options.topics });
  await serde.registerAll();
  const publisher = await EventPublisher.connect(kafka, serde);
  const keys = new Keyspace(options.redisPrefix);

  const implementations = new Map<string, ToolImplementation>();
  for (const implementation of options.implementations) {
    // Only tools of the loaded catalog run: the contract object must be the catalog's own.
    if (options.catalog.get(implementation.contract.address) === implementation.contract) {
      implementations.set(implementation.contract.address, implementation);
    }
  }

  const consumer = await startParallelConsumer({
    kafka,
    serde,
    role: 'execute',
    groupId: options.groupId,
    handle: orderHandler({
      catalog: options.catalog,
      implementations,
      idempotency: new IdempotencyStore(options.redis, keys),
      proposals: new ProposalStore(options.redis, keys),
      approvals: new ApprovalStore(options.redis, keys),
      slots: new SlotPool(options.redis, keys),
      locks: new ResourceLock(options.redis, keys),
      limits: options.limits ?? { tenantDefault: 8, tenants: {}, run: 4 },
      publisher,
      executorId: options.executorId,
      leaseMs: options.leaseMs,
      proposalTtlMs: options.proposalTtlMs,
      logger,
    }),
    deadLetters: new DeadLetters(publisher.producer),
    logger,
    maxConcurrency: options.concurrency,
    maxPerKey: options.perTenantConcurrency,
    sessionTimeoutMs: options.sessionTimeoutMs ?? 10_000,
  });
  return {
    joined: consumer.joined,
    stats: () => consumer.stats(),
    stop: async ({ drainTimeoutMs = 10_000 } = {}) => {
      await consumer.stop({ drainTimeoutMs });
      await publisher.disconnect();
    },
  };
}
