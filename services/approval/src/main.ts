import { topicNames } from '@gatehouse/events';
import { referenceCatalog } from '@gatehouse/reference-tools';
import { runMain } from '@gatehouse/runtime';
import { createRedis } from '@gatehouse/state';
import { createLogger } from '@gatehouse/telemetry';
import { Approvers } from './approvers.js';
import { approvalConfigFromEnv } from './config.js';
import { startApprovalService } from './service.js';

const logger = createLogger('approval');
await runMain({
  name: 'approval service',
  logger,
  start: async (teardown) => {
    const config = approvalConfigFromEnv();
    const approvers = Approvers.load(config.approversFile);
    const redis = createRedis(config.redisUrl, 'gatehouse-approval', logger);
    teardown.add(() => redis.quit());
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
    teardown.add((stop) => service.stop(stop));
    await service.joined;
    return { url: service.url, schema: config.schema, approvers: approvers.list().length };
  },
});
