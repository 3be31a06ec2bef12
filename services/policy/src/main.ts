import { topicNames } from '@gatehouse/events';
import { AccessTokenVerifier } from '@gatehouse/identity';
import { hostToolPack, loadToolPack, runMain } from '@gatehouse/runtime';
import { createRedis } from '@gatehouse/state';
import { createLogger, startTracing } from '@gatehouse/telemetry';
import { policyConfigFromEnv } from './config.js';
import { startPolicyService } from './service.js';

const logger = createLogger('policy');
await runMain({
  name: 'policy service',
  logger,
  start: async (teardown) => {
    const config = policyConfigFromEnv();
    // Spans leave the process only when OTEL_EXPORTER_OTLP_ENDPOINT is set. Closed last, so the
    // spans of the final records are flushed.
    const tracing = startTracing(config.tracing);
    teardown.add(() => tracing.shutdown());
    // The tool pack GATEHOUSE_TOOL_PACK names, with a deployment's roles or policy table in place of its own.
    const pack = await hostToolPack(await loadToolPack(config.toolPack ?? ''), process.env, {
      rolesFile: config.rolesFile,
      policyTableFile: config.policyTableFile,
    });
    const redis = createRedis(config.redisUrl, 'gatehouse-policy', logger, config.redisBarrier);
    teardown.add(() => redis.quit());
    const service = await startPolicyService({
      events: config.events,
      topics: topicNames(config.events.topicPrefix),
      redis,
      redisPrefix: config.redisPrefix,
      catalog: pack.catalog,
      roles: pack.roles,
      table: pack.policyTable,
      logger,
      ...(config.controlToken === undefined ? {} : { controlToken: config.controlToken }),
      ...(config.oidc === undefined
        ? {}
        : {
            callerIdentity: {
              accessTokens: await AccessTokenVerifier.discover({ issuer: config.oidc.issuer, audience: config.oidc.audience }),
              scope: config.oidc.scope,
            },
          }),
      ...(config.oidc === undefined || config.exchangeClientId === undefined
        ? {}
        : { subjectTokens: await AccessTokenVerifier.discover({ issuer: config.oidc.issuer, audience: config.exchangeClientId }) }),
      signingKey: config.signingKey,
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
    return { url: service.url, pack: pack.name };
  },
});
