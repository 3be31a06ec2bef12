import { topicNames } from '@gatehouse/events';
import { loadRoles, PolicyTable } from '@gatehouse/governance';
import { referenceCatalog } from '@gatehouse/reference-tools';
import { runMain } from '@gatehouse/runtime';
import { createRedis } from '@gatehouse/state';
import { createLogger } from '@gatehouse/telemetry';
import { policyConfigFromEnv } from './config.js';
import { startPolicyService } from './service.js';

const logger = createLogger('policy');
await runMain({
  name: 'policy service',
  logger,
  start: async (teardown) => {
    const config = policyConfigFromEnv();
    const catalog = referenceCatalog();
    const redis = createRedis(config.redisUrl, 'gatehouse-policy', logger);
    teardown.add(() => redis.quit());
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
    teardown.add((stop) => service.stop(stop));
    await service.joined;
    return { url: service.url };
  },
});
