import pg from 'pg';
import type { Admin } from 'kafkajs';
import type { Catalog } from '@gatehouse/contracts';
import { createKafka, DeadLetters, EventPublisher, EventSerde, provisionTopics, startParallelConsumer } from '@gatehouse/events';
import type { EventsConfig, RunningParallelConsumer, Topics } from '@gatehouse/events';
import { ApprovalStore, Keyspace } from '@gatehouse/state';
import type { Redis } from '@gatehouse/state';
import { checkReadiness, GatehouseMetrics, startConsumerLag } from '@gatehouse/telemetry';
import type { Logger, RunningConsumerLag } from '@gatehouse/telemetry';
import { buildApi } from './api.js';
import { ApprovalDesk } from './approval-desk.js';
import type { Approvers } from './approvers.js';
import { loadConsoleAssets } from './console-assets.js';
import type { ConsoleAssets } from './console-assets.js';
import { ensureDatabase } from './db.js';
import { DecisionPublisher } from './decision-publisher.js';
import { migrate } from './migrations.js';
import { requestHandler } from './request-handler.js';
import { RequestRepository } from './request-repository.js';
import { startSweeper } from './sweeper.js';
import type { RunningSweeper } from './sweeper.js';

export interface ApprovalServiceOptions {
  readonly events: EventsConfig;
  readonly topics: Topics;
  readonly databaseUrl: string;
  /** PostgreSQL schema of the service's tables. */
  readonly schema: string;
  readonly redis: Redis;
  readonly redisPrefix: string;
  readonly approvers: Approvers;
  /** Names the preview tool of each commit tool, for `next` in a refusal. */
  readonly catalog: Catalog;
  readonly logger: Logger;
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly approvalValidityMs: number;
  readonly sweepMs: number;
  /** How long an unconfirmed publish of a decision waits before the outbox retries it (default 10 s). */
  readonly outboxRetryMs?: number;
  readonly groupId: string;
  readonly instanceId?: string;
  readonly assets?: ConsoleAssets;
  /** This instance's metrics, served at GET /metrics; default a fresh registry over the catalog. */
  readonly metrics?: GatehouseMetrics;
}

export interface RunningApprovalService {
  /** Base URL of the API and console. */
  readonly url: string;
  readonly joined: Promise<void>;
  /** Runs one expiry and outbox sweep now. */
  sweep(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Wires the approval service: migrates its PostgreSQL schema, provisions topics and schemas,
 * retries any decision left unpublished, then consumes approval requests, sweeps expiries and
 * serves the API and console.
 */
export async function startApprovalService(options: ApprovalServiceOptions): Promise<RunningApprovalService> {
  const instance = options.instanceId ?? 'approval';
  const logger = options.logger.child({ instance });
  const assets = options.assets ?? loadConsoleAssets();
  for (const approver of options.approvers.list()) {
    if (approver.demo) logger.warn({ approver: approver.identity }, 'demo approver loaded: its token is public; never use it in production');
  }

  await ensureDatabase(options.databaseUrl);
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });
  pool.on('error', (error) => logger.error({ err: error }, 'idle PostgreSQL client failed'));
  let publisher: EventPublisher | undefined;
  let consumer: RunningParallelConsumer | undefined;
  let sweeper: RunningSweeper | undefined;
  let lag: RunningConsumerLag | undefined;
  let admin: Admin | undefined;
  const metrics = options.metrics ?? new GatehouseMetrics({ tools: options.catalog.tools() });
  try {
    const applied = await migrate(pool, options.schema);
    logger.info({ schema: options.schema, migrations_applied: applied }, 'database ready');

    const kafka = createKafka(options.events, `gatehouse-approval-${instance}`, logger);
    // Kept connected: it measures the group's consumer lag.
    admin = kafka.admin();
    await admin.connect();
    await provisionTopics(admin, options.topics, options.events.topicSettings);
    const serde = new EventSerde({ registryUrl: options.events.registryUrl, topics: options.topics });
    await serde.registerAll();
    publisher = await EventPublisher.connect(kafka, serde);

    const repository = new RequestRepository(pool, options.schema);
    const approvals = new ApprovalStore(options.redis, new Keyspace(options.redisPrefix));
    const decisions = new DecisionPublisher(repository, publisher, approvals, options.catalog, logger.child({ component: 'outbox' }), metrics);
    sweeper = startSweeper({
      repository,
      decisions,
      logger: logger.child({ component: 'sweeper' }),
      intervalMs: options.sweepMs,
      staleClaimMs: options.outboxRetryMs ?? 10_000,
      metrics,
    });
    // Decisions a previous process committed but did not confirm published go out before new work.
    await sweeper.sweep();

    consumer = await startParallelConsumer({
      kafka,
      serde,
      role: 'approvalsRequested',
      groupId: options.groupId,
      handle: requestHandler(repository, decisions, publisher, logger.child({ component: 'requests' })),
      deadLetters: new DeadLetters(publisher),
      logger,
      // A request published before this group ever joined must still be seen.
      fromBeginning: true,
    });
    lag = startConsumerLag({ admin, groupId: options.groupId, topics: [options.topics.approvalsRequested], metrics, logger });

    const desk = new ApprovalDesk(repository, decisions, options.approvalValidityMs, logger.child({ component: 'desk' }), metrics);
    const connectedAdmin = admin;
    const api = buildApi({
      repository,
      desk,
      approvers: options.approvers,
      assets,
      logger,
      metrics,
      // Ready means every dependency answers: PostgreSQL, Kafka, the registry and Redis.
      ready: async () =>
        (
          await checkReadiness({
            postgres: () => repository.ping(),
            kafka: async () => (await connectedAdmin.describeCluster()).brokers.length > 0,
            registry: async () => (await fetch(`${options.events.registryUrl}/subjects`, { signal: AbortSignal.timeout(2_000) })).ok,
            redis: async () => (await options.redis.ping()) === 'PONG',
          })
        ).ready,
    });
    const url = await api.listen({ host: options.host, port: options.port });
    const running = { consumer, sweeper, publisher, lag, admin };
    return {
      url,
      joined: consumer.joined,
      sweep: () => running.sweeper.sweep(),
      stop: async () => {
        await api.close();
        running.lag.stop();
        await running.sweeper.stop();
        await running.consumer.stop();
        await running.publisher.disconnect();
        await running.admin.disconnect();
        await pool.end();
      },
    };
  } catch (error) {
    lag?.stop();
    await sweeper?.stop().catch(() => undefined);
    await consumer?.stop().catch(() => undefined);
    await publisher?.disconnect().catch(() => undefined);
    await admin?.disconnect().catch(() => undefined);
    await pool.end().catch(() => undefined);
    throw error;
  }
}
