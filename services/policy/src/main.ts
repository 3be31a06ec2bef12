import { topicNames } from '@gatehouse/events';
import { AccessTokenVerifier, TokenSealer } from '@gatehouse/identity';
import { hostToolPack, loadToolPack, runMain } from '@gatehouse/runtime';
import type { HostedPack } from '@gatehouse/runtime';
import { createRedis, recordLedgerSteps } from '@gatehouse/state';
import { createLogger, startTracing } from '@gatehouse/telemetry';
import { policyConfigFromEnv } from './config.js';
import type { PolicyConfig } from './config.js';
import { loadOperatorPolicy } from './operators.js';
import type { OperatorIdentity } from './operators.js';
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
      approverPolicyFile: config.approverPolicyFile,
    });
    if (config.ledgerHistory !== undefined) teardown.add(recordLedgerSteps(config.ledgerHistory, `policy ${process.pid}`));
    const redis = createRedis(config.redisUrl, 'gatehouse-policy', logger, config.redisBarrier);
    teardown.add(() => redis.quit());
    const service = await startPolicyService({
      events: config.events,
      topics: topicNames(config.events.topicPrefix),
      answerTransactions: config.answerTransactions,
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
      ...(config.oidc === undefined || config.delegation === undefined
        ? {}
        : {
            subjectTokens: {
              verifier: await AccessTokenVerifier.discover({ issuer: config.oidc.issuer, audience: config.delegation.clientId }),
              sealer: new TokenSealer(config.delegation.sealingKeys),
            },
          }),
      ...(config.oidc === undefined || config.operators === undefined
        ? {}
        : { operatorIdentity: await operatorIdentity(config.oidc, config.operators, pack) }),
      signingKey: config.signingKey,
      ...(config.frontDoorKeys === undefined ? {} : { frontDoorKeys: config.frontDoorKeys }),
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

/**
 * Operators as this deployment knows them: people's tokens for POLICY_OPERATOR_AUDIENCE, mapped by
 * the approver policy in force (checked at start-up, as the approval service checks it).
 */
async function operatorIdentity(
  oidc: NonNullable<PolicyConfig['oidc']>,
  operators: NonNullable<PolicyConfig['operators']>,
  pack: HostedPack,
): Promise<OperatorIdentity> {
  const approverRoles = new Set(
    pack.policyTable.rules.flatMap((r) => (r.decision.kind === 'require_approval' ? [r.decision.approverRole] : [])),
  );
  const policy = loadOperatorPolicy(pack.approverPolicyFile, approverRoles, operators.role);
  if (policy === undefined || !policy.grants(operators.role)) {
    logger.warn(
      { role: operators.role, approver_policy: pack.approverPolicyFile ?? null },
      'no grant of the approver policy gives the operator role (POLICY_OPERATOR_ROLE): no one can look up or resolve operations',
    );
  }
  return {
    accessTokens: await AccessTokenVerifier.discover({ issuer: oidc.issuer, audience: operators.audience }),
    policy,
    role: operators.role,
    runsScope: oidc.scope,
  };
}
