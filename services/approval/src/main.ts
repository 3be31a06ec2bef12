import { topicNames } from '@gatehouse/events';
import { referenceCatalog } from '@gatehouse/reference-tools';
import { createRedis } from '@gatehouse/state';
import { createLogger } from '@gatehouse/telemetry';
import { Approvers } from './approvers.js';
import { approvalConfigFromEnv } from './config.js';
import { startApprovalService } from './service.js';

const logger = createLogger('approval');

try {
  const config = approvalConfigFromEnv();
  const approvers = Approvers.load(config.approversFile);
  const redis = createRedis(config.redisUrl, 'gatehouse-approval', logger);
  const service = await startApprovalService({
    events: config.events,
    topics: topicNames(config.events.topicPrefix),
    databaseUrl: config.databaseUrl,
    schema: config.schema,
    redis,
    redisPrefix: config.redisPrefix,
    approvers,
    catalog: referenceCatalog(),
    logger,
    host: config.host,
    port: config.port,
    approvalValidityMs: config.approvalValidityMs,
    sweepMs: config.sweepMs,
    outboxRetryMs: config.outboxRetryMs,
    groupId: config.groupId,
  });
  logger.info({ url: service.url, schema: config.schema, approvers: approvers.list().length }, 'approval service ready');
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    service
      .stop()
      .then(() => redis.quit())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
} catch (error) {
  logger.fatal({ err: error }, 'approval service failed to start');
  process.exitCode = 1;
}
