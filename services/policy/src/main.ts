import { referenceCatalog } from '@gatehouse/reference-tools';
import { topicNames } from '@gatehouse/events';
import { createRedis } from '@gatehouse/state';
import { createLogger } from '@gatehouse/telemetry';
import { policyConfigFromEnv } from './config.js';
import { loadRoles, PolicyTable } from '@gatehouse/governance';
import { startPolicyService } from './service.js';

const logger = createLogger('policy');
const config = policyConfigFromEnv();
const catalog = referenceCatalog();
const redis = createRedis(config.redisUrl, 'gatehouse-policy', logger);
const service = await startPolicyService({
  events: config.events,
  topics: topicNames(config.events.topicPrefix),
  redis,
  redisPrefix: config.redisPrefix,
  catalog,
  roles: loadRoles(config.rolesFile, catalog),
  table: PolicyTable.load(config.policyTableFile, catalog.tools()),
  logger,
  controlToken: config.controlToken,
  host: config.host,
  port: config.port,
  maxArgumentBytes: config.maxArgumentBytes,
  maxRunTtlMs: config.maxRunTtlMs,
  groupId: config.groupId,
  concurrency: config.concurrency,
  sessionTimeoutMs: config.sessionTimeoutMs,
  proposalTtlMs: config.proposalTtlMs,
});
logger.info({ url: service.url }, 'policy service ready');

const shutdown = async (signal: string): Promise<void> => {
  logger.info({ signal }, 'stopping');
  await service.stop();
  await redis.quit();
  process.exit(0);
};
process.once('SIGTERM', () => void shutdown('SIGTERM'));
process.once('SIGINT', () => void shutdown('SIGINT'));
