import { createKafka, DeadLetters, EventPublisher, EventSerde, provisionTopics, startParallelConsumer } from '@gatehouse/events';
import type { EventsConfig, Topics } from '@gatehouse/events';
import type { Catalog } from '@gatehouse/contracts';
import { ApprovalStore, IdempotencyStore, Keyspace, ProposalStore, RateLimiter, RunRegistry } from '@gatehouse/state';
import type { Redis } from '@gatehouse/state';
import { checkReadiness, GatehouseMetrics, startConsumerLag } from '@gatehouse/telemetry';
import type { Logger } from '@gatehouse/telemetry';
import { commandHandler } from './command-handler.js';
import { buildControlApi } from './control-api.js';
import { rolesGranting } from '@gatehouse/governance';
import type { PolicyTable, Roles } from '@gatehouse/governance';

export interface PolicyServiceOptions {
  readonly events: EventsConfig;
  readonly topics: Topics;
  readonly redis: Redis;
  readonly redisPrefix: string;
  readonly catalog: Catalog;
  readonly roles: Roles;
  readonly table: PolicyTable;
  readonly logger: Logger;
  readonly controlToken: string;
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly maxArgumentBytes: number;
  readonly maxRunTtlMs: number;
  readonly groupId: string;
  readonly concurrency: number;
  /** Consumer group session timeout (default 10 s): how soon a dead instance's partitions move. */
  readonly sessionTimeoutMs?: number;
  readonly grantValidityMs?: number;
  /** How long a proposal drafted here stays valid; main.ts passes GATEHOUSE_PROPOSAL_TTL_MS, the executor's too. Default 15 min. */
  readonly proposalTtlMs?: number;
  readonly instanceId?: string;
  /** This instance's metrics, served at GET /metrics; default a fresh registry over the catalog. */
  readonly metrics?: GatehouseMetrics;
}

export interface RunningPolicyService {
  /** Base URL of the control API. */
  readonly url: string;
  readonly joined: Promise<void>;
  stop(): Promise<void>;
}

/** Wires the policy service: provisions topics and schemas, then consumes commands and serves the control API. */
export async function startPolicyService(options: PolicyServiceOptions): Promise<RunningPolicyService> {
  const logger = options.logger.child({ instance: options.instanceId ?? 'policy' });
  const kafka = createKafka(options.events, `gatehouse-policy-${options.instanceId ?? 'main'}`, logger);
  const admin = kafka.admin();
  await admin.connect();
  await provisionTopics(admin, options.topics, options.events.topicSettings);
  const serde = new EventSerde({ registryUrl: options.events.registryUrl, topics: options.topics });
  await serde.registerAll();
  const publisher = await EventPublisher.connect(kafka, serde);
  const metrics = options.metrics ?? new GatehouseMetrics({ tools: options.catalog.tools() });

  const keys = new Keyspace(options.redisPrefix);
  const runs = new RunRegistry(options.redis, keys);
  const deps = {
    catalog: options.catalog,
    runs,
    limiter: new RateLimiter(options.redis, keys),
    maxArgumentBytes: options.maxArgumentBytes,
    rolesGranting: rolesGranting(options.roles),
    table: options.table,
    proposals: new ProposalStore(options.redis, keys),
    approvals: new ApprovalStore(options.redis, keys),
    idempotency: new IdempotencyStore(options.redis, keys),
    grantValidityMs: options.grantValidityMs ?? 10 * 60 * 1000,
    proposalTtlMs: options.proposalTtlMs ?? 15 * 60 * 1000,
  };
  const consumer = await startParallelConsumer({
    kafka,
    serde,
    role: 'commands',
    groupId: options.groupId,
    handle: commandHandler(deps, publisher, logger.child({ component: 'decide' }), metrics),
    deadLetters: new DeadLetters(publisher),
    // A new group starts at the beginning: nothing published before its first member joined is skipped.
    fromBeginning: true,
    logger,
    maxConcurrency: options.concurrency,
    sessionTimeoutMs: options.sessionTimeoutMs ?? 10_000,
  });
  const lag = startConsumerLag({ admin, groupId: options.groupId, topics: [options.topics.commands], metrics, logger });

  const api = buildControlApi({
    runs,
    catalog: options.catalog,
    roles: options.roles,
    controlToken: options.controlToken,
    maxRunTtlMs: options.maxRunTtlMs,
    logger,
    metrics,
    // Ready means every dependency answers: Kafka, the registry and Redis.
    ready: async () =>
      (
        await checkReadiness({
          kafka: async () => (await admin.describeCluster()).brokers.length > 0,
          registry: async () => (await fetch(`${options.events.registryUrl}/subjects`, { signal: AbortSignal.timeout(2_000) })).ok,
          redis: async () => (await options.redis.ping()) === 'PONG',
        })
      ).ready,
    operations: {
      idempotency: deps.idempotency,
      publish: (result) => publisher.publish('results', result.run_id, result),
    },
  });
  const url = await api.listen({ host: options.host, port: options.port });

  return {
    url,
    joined: consumer.joined,
    stop: async () => {
      await api.close();
      lag.stop();
      await consumer.stop();
      await publisher.disconnect();
      await admin.disconnect();
    },
  };
}
