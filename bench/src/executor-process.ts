// An executor as its own OS process, running the bench catalog: the production entrypoint
// (services/executor/src/main.ts) with the bench tools in place of the reference ones. Configured
// by the executor's environment variables (executorConfigFromEnv).
import { topicNames } from '@gatehouse/events';
import { executorConfigFromEnv, startExecutor } from '@gatehouse/executor';
import { createRedis } from '@gatehouse/state';
import { createLogger } from '@gatehouse/telemetry';
import { benchCatalog } from './bench-catalog.js';

const logger = createLogger('executor');
const config = executorConfigFromEnv();
const { catalog, implementations } = benchCatalog();
const redis = createRedis(config.redisUrl, `bench-executor-${config.executorId}`);
const executor = await startExecutor({
  events: config.events,
  topics: topicNames(config.events.topicPrefix),
  redis,
  redisPrefix: config.redisPrefix,
  catalog,
  implementations,
  logger,
  executorId: config.executorId,
  groupId: config.groupId,
  concurrency: config.concurrency,
  perTenantConcurrency: config.perTenantConcurrency,
  leaseMs: config.leaseMs,
  proposalTtlMs: config.proposalTtlMs,
  limits: config.limits,
  sessionTimeoutMs: config.sessionTimeoutMs,
});
await executor.joined;
logger.info({ executorId: config.executorId }, 'bench executor ready');

const shutdown = async (): Promise<void> => {
  await executor.stop({ drainTimeoutMs: 5_000 });
  await redis.quit();
  process.exit(0);
};
process.once('SIGTERM', () => void shutdown());
process.once('SIGINT', () => void shutdown());
