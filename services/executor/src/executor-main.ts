import type { Catalog, ToolImplementation } from '@gatehouse/contracts';
import { topicNames } from '@gatehouse/events';
import { runMain } from '@gatehouse/runtime';
import { createRedis, recordLedgerSteps } from '@gatehouse/state';
import { createLogger, startTracing } from '@gatehouse/telemetry';
import { executorConfigFromEnv } from './config.js';
import type { ExecutorConfig } from './config.js';
import { startExecutor } from './service.js';

/** The tools an executor process hosts. */
export interface HostedTools {
  readonly catalog: Catalog;
  readonly implementations: readonly ToolImplementation[];
}

export interface ExecutorMainOptions {
  /** Serve /metrics, /healthz and /readyz on EXECUTOR_HOST:EXECUTOR_PORT (default true). */
  readonly ops?: boolean;
  /** How long a stop signal lets running records finish (default 15 s). */
  readonly drainTimeoutMs?: number;
}

/**
 * The executor process: reads its settings from the environment, loads the tools it hosts, and
 * runs until SIGTERM or SIGINT. It says `executor ready` once it has joined its group.
 */
export async function executorMain(
  load: (config: ExecutorConfig) => HostedTools | Promise<HostedTools>,
  options: ExecutorMainOptions = {},
): Promise<void> {
  const logger = createLogger('executor');
  await runMain({
    name: 'executor',
    logger,
    drainTimeoutMs: options.drainTimeoutMs ?? 15_000,
    start: async (teardown) => {
      const config = executorConfigFromEnv();
      // Spans leave the process only when OTEL_EXPORTER_OTLP_ENDPOINT is set. Closed last, so the
      // spans of the final records are flushed.
      const tracing = startTracing(config.tracing);
      teardown.add(() => tracing.shutdown());
      const { catalog, implementations } = await load(config);
      if (config.ledgerHistory !== undefined) teardown.add(recordLedgerSteps(config.ledgerHistory, `executor ${config.executorId}`));
      const redis = createRedis(config.redisUrl, `gatehouse-executor-${config.executorId}`, logger, config.redisBarrier);
      teardown.add(() => redis.quit());
      const executor = await startExecutor({
        events: config.events,
        topics: topicNames(config.events.topicPrefix),
        redis,
        redisPrefix: config.redisPrefix,
        catalog,
        implementations,
        trustedKeys: config.trustedKeys,
        signingKey: config.signingKey,
        assertions: config.assertions,
        exchange: config.exchange,
        logger,
        executorId: config.executorId,
        groupId: config.groupId,
        concurrency: config.concurrency,
        perTenantConcurrency: config.perTenantConcurrency,
        leaseMs: config.leaseMs,
        answerTransactions: config.answerTransactions,
        proposalTtlMs: config.proposalTtlMs,
        limits: config.limits,
        sessionTimeoutMs: config.sessionTimeoutMs,
        ...(options.ops === false ? {} : { http: { host: config.host, port: config.port } }),
      });
      teardown.add((stop) => executor.stop(stop));
      await executor.joined;
      return { executorId: config.executorId, url: executor.url };
    },
  });
}
