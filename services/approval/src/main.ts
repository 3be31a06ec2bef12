import { topicNames } from '@gatehouse/events';
import { hostToolPack, loadToolPack, runMain, ToolPackLoadError } from '@gatehouse/runtime';
import { createRedis } from '@gatehouse/state';
import { createLogger, startTracing } from '@gatehouse/telemetry';
import { AccessTokenVerifier, discoverRelyingParty } from '@gatehouse/identity';
import type { HostedPack } from '@gatehouse/runtime';
import type { ApproverIdentity } from './approver-auth.js';
import { ApproverPolicy } from './approver-policy.js';
import { Approvers } from './approvers.js';
import type { ApprovalConfig } from './config.js';
import { loadWebhookEndpoints } from './webhooks.js';
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
    // The tool pack GATEHOUSE_TOOL_PACK names, and its approver documents unless a deployment's files replace them.
    const pack = await hostToolPack(await loadToolPack(config.toolPack ?? ''), process.env, {
      approversFile: config.approversFile,
      approverPolicyFile: config.approverPolicyFile,
    });
    const identity = config.oidc === undefined ? undefined : await approverIdentity(config.oidc, pack);
    let approvers: Approvers | undefined;
    if (config.demoApprovers) {
      if (pack.approversFile === undefined)
        throw new ToolPackLoadError(`${pack.name} ships no approvers file: set GATEHOUSE_APPROVERS_FILE`);
      logger.warn(
        { file: pack.approversFile },
        'GATEHOUSE_DEMO_APPROVERS=on: the approval API takes the bearer tokens of this file, whose demo tokens are published. Never in production.',
      );
      approvers = Approvers.load(pack.approversFile);
    }
    const redis = createRedis(config.redisUrl, 'gatehouse-approval', logger);
    teardown.add(() => redis.quit());
    const service = await startApprovalService({
      events: config.events,
      topics: topicNames(config.events.topicPrefix),
      databaseUrl: config.databaseUrl,
      schema: config.schema,
      redis,
      redisPrefix: config.redisPrefix,
      ...(identity === undefined ? {} : { identity }),
      ...(approvers === undefined ? {} : { approvers }),
      ...(config.publicUrl === undefined ? {} : { publicUrl: config.publicUrl }),
      sessionTtlMs: config.sessionTtlMs,
      ...(config.webhooksFile === undefined
        ? {}
        : {
            webhooks: {
              endpoints: loadWebhookEndpoints(config.webhooksFile, process.env),
              attempts: config.webhookAttempts,
              backoffMs: config.webhookBackoffMs,
              timeoutMs: config.webhookTimeoutMs,
            },
          }),
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
    return {
      url: service.url,
      schema: config.schema,
      issuer: config.oidc?.issuer ?? null,
      demo_approvers: approvers?.list().length ?? 0,
      pack: pack.name,
    };
  },
});

/** The identity provider as the approval service uses it: checked at start-up, so a wrong issuer or policy stops the start. */
async function approverIdentity(oidc: NonNullable<ApprovalConfig['oidc']>, pack: HostedPack): Promise<ApproverIdentity> {
  if (pack.approverPolicyFile === undefined)
    throw new ToolPackLoadError(`${pack.name} ships no approver policy: set GATEHOUSE_APPROVER_POLICY_FILE`);
  const roles = new Set(pack.policyTable.rules.flatMap((r) => (r.decision.kind === 'require_approval' ? [r.decision.approverRole] : [])));
  const policy = ApproverPolicy.load(pack.approverPolicyFile, roles);
  const accessTokens = await AccessTokenVerifier.discover({ issuer: oidc.issuer, audience: oidc.audience });
  if (oidc.clientId === undefined) return { accessTokens, policy };
  const relyingParty = await discoverRelyingParty(oidc.issuer, oidc.clientId, oidc.clientSecret);
  return { accessTokens, policy, console: { relyingParty, clientId: oidc.clientId } };
}
