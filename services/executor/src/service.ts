import { createKafka, DeadLetters, EventPublisher, EventSerde, provisionTopics, startParallelConsumer } from '@gatehouse/events';
import type { EventsConfig, ParallelConsumerStats, Topics } from '@gatehouse/events';
import type { Catalog, ToolImplementation } from '@gatehouse/contracts';
import { ApprovalStore, IdempotencyStore, Keyspace, ProposalStore, ResourceLock, SlotPool } from '@gatehouse/state';
import type { Redis } from '@gatehouse/state';
import { GatehouseMetrics, startConsumerLag } from '@gatehouse/telemetry';
import type { Logger } from '@gatehouse/telemetry';
import { buildOpsServer } from './ops-server.js';
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
  /** Where to serve /metrics, /healthz and /readyz (port 0 picks a free one); none when absent. */
  readonly http?: { readonly host: string; readonly port: number };
  /** This executor's metrics; default a fresh registry over the catalog. */
  readonly metrics?: GatehouseMetrics;
}

export interface RunningExecutor {
  readonly joined: Promise<void>;
  /** Base URL of /metrics, /healthz and /readyz; undefined when not served. */
  readonly url: string | undefined;
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
  const serde = new EventSerde({ registryUrl: options.events.registryUrl, topics: options.topics });
  await serde.registerAll();
  const publisher = await EventPublisher.connect(kafka, serde);
  const keys = new Keyspace(options.redisPrefix);
  const metrics = options.metrics ?? new GatehouseMetrics({ tools: options.catalog.tools() });

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
      metrics,
    }),
    deadLetters: new DeadLetters(publisher),
    // A new group starts at the beginning: nothing published before its first member joined is skipped.
    fromBeginning: true,
    logger,
    maxConcurrency: options.concurrency,
    maxPerKey: options.perTenantConcurrency,
    sessionTimeoutMs: options.sessionTimeoutMs ?? 10_000,
  });
  let joined = false;
  void consumer.joined.then(() => (joined = true));
  const lag = startConsumerLag({ admin, groupId: options.groupId, topics: [options.topics.execute], metrics, logger });
  const ops = buildOpsServer({
    logger,
    metrics,
    checks: {
      kafka: async () => joined && (await admin.describeCluster()).brokers.length > 0,
      registry: async () => (await fetch(`${options.events.registryUrl}/subjects`, { signal: AbortSignal.timeout(2_000) })).ok,
      redis: async () => (await options.redis.ping()) === 'PONG',
    },
  });
  const url = options.http === undefined ? undefined : await listen(ops, options.http, logger);
  return {
    joined: consumer.joined,
    url,
    stats: () => consumer.stats(),
    stop: async ({ drainTimeoutMs = 10_000 } = {}) => {
      await ops.close();
      lag.stop();
      await consumer.stop({ drainTimeoutMs });
      await publisher.disconnect();
      await admin.disconnect();
    },
  };
}

/**
 * Serves the ops endpoint. A port already taken (several executors started on one host without an
 * EXECUTOR_PORT each) costs only the endpoint, never the executor: it is logged, not thrown.
 */
async function listen(ops: ReturnType<typeof buildOpsServer>, at: { readonly host: string; readonly port: number }, logger: Logger): Promise<string | undefined> {
  try {
    return await ops.listen({ host: at.host, port: at.port });
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'EADDRINUSE') throw error;
    logger.error({ host: at.host, port: at.port }, 'ops port in use: /metrics, /healthz and /readyz are not served');
    return undefined;
  }
}
