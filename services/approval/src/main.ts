import { topicNames } from '@gatehouse/events';
import { hostToolPack, loadToolPack, runMain, ToolPackLoadError } from '@gatehouse/runtime';
import { createRedis } from '@gatehouse/state';
import { createLogger, startTracing } from '@gatehouse/telemetry';
import { Approvers } from './approvers.js';
import { approvalConfigFromEnv } from './config.js';
import { startApprovalService } from './service.js';

const logger = createLogger('approval');
await runMain({
  name: 'approval service',
  logger,
  start: async (teardown) => {
    const config = approvalConfigFromEnv();
    // Spans leave the process only when OTEL_EXPORTER_OTLP_ENDPOINT is set. Closed last, so the
    // spans of the final records are flushed.
    const tracing = startTracing(config.tracing);
    teardown.add(() => tracing.shutdown());
    // The tool pack GATEHOUSE_TOOL_PACK names, and its approvers unless a deployment's file replaces them.
    const pack = await hostToolPack(await loadToolPack(config.toolPack ?? ''), process.env, { approversFile: config.approversFile });
    if (pack.approversFile === undefined) throw new ToolPackLoadError(`${pack.name} ships no approvers file: set GATEHOUSE_APPROVERS_FILE`);
    const approvers = Approvers.load(pack.approversFile);
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
      signingKey: config.signingKey,
      trustedKeys: config.trustedKeys,
      catalog: pack.catalog,
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
    return { url: service.url, schema: config.schema, approvers: approvers.list().length, pack: pack.name };
  },
});
