import { referenceCatalog, referenceImplementations } from '@gatehouse/reference-tools';
import { topicNames } from '@gatehouse/events';
import { createRedis } from '@gatehouse/state';
import { createLogger } from '@gatehouse/telemetry';
import { executorConfigFromEnv } from './config.js';
import { startExecutor } from './service.js';

const logger = createLogger('executor');
const config = executorConfigFromEnv();
const redis = createRedis(config.redisUrl, `gatehouse-executor-${config.executorId}`, logger);
const executor = await startExecutor({
  events: config.events,
  topics: topicNames(config.events.topicPrefix),
  redis,
  redisPrefix: config.redisPrefix,
  catalog: referenceCatalog(),
  implementations: referenceImplementations,
  logger,
  executorId: config.executorId,
  groupId: config.groupId,
  concurrency: config.concurrency,
  perTenantConcurrency: config.perTenantConcurrency,
  leaseMs: config.leaseMs,
  proposalTtlMs: config.proposalTtlMs,
  limits: config.limits,
  sessionTimeoutMs: config.sessionTimeoutMs,
  http: { host: config.host, port: config.port },
});
await executor.joined;
logger.info({ executorId: config.executorId, url: executor.url }, 'executor ready');

const shutdown = async (signal: string): Promise<void> => {
  logger.info({ signal }, 'stopping: finishing in-flight work');
  await executor.stop({ drainTimeoutMs: 15_000 });
  await redis.quit();
  process.exit(0);
};
process.once('SIGTERM', () => void shutdown('SIGTERM'));
process.once('SIGINT', () => void shutdown('SIGINT'));
