// A Gatehouse service as its own OS process: the policy service or one executor on one arm's topics,
// with the bench catalog, on a Redis connection of its own whose sends it counts. As the services'
// own entry points do, it exports spans over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (the
// tracing arm sets it to the bench's sink; every other arm removes it). The bench main
// process starts it (`start`), samples its CPU and Redis sends around each measured window, and
// stops it (`stop`); it exits at once if the bench goes away.
import { randomUUID } from 'node:crypto';
import { keyRing, parseSigningKey, parseTrustedKeys, topicNames } from '@gatehouse/events';
import { startExecutor } from '@gatehouse/executor';
import { startPolicyService } from '@gatehouse/policy';
import { createRedis, redisUrlFromEnv } from '@gatehouse/state';
import { startTracing } from '@gatehouse/telemetry';
import type { Tracing } from '@gatehouse/telemetry';
import { benchCatalog } from './bench-catalog.js';
import { PAUSE_SESSION_TIMEOUT_MS, serveParent } from './child-process.js';
import { EXECUTOR_SETTINGS, POLICY_SETTINGS } from './gatehouse.js';
import type { ServiceStart } from './gatehouse.js';
import { countSends } from './redis-stats.js';
import { config, serviceLogger } from './stack.js';

const redis = createRedis(redisUrlFromEnv(), `bench-${process.pid}`);
const sends = countSends(redis);
let stop: () => Promise<void> = () => Promise.resolve();
let tracing: Tracing | undefined;
// As the services read it: answers in transactions where the bench's topics are replicated, unless off.
const answerTransactions = process.env['GATEHOUSE_ANSWER_TRANSACTIONS'] === 'off' ? 'off' : 'auto';

async function start(s: ServiceStart): Promise<void> {
  tracing = startTracing({ serviceName: `gatehouse-${s.role}` });
  const { catalog, implementations, roles, table } = benchCatalog();
  const topics = topicNames(s.topicPrefix);
  if (s.role === 'policy') {
    const policy = await startPolicyService({
      events: config,
      topics,
      answerTransactions,
      redis,
      redisPrefix: s.redisPrefix,
      catalog,
      roles,
      table,
      logger: serviceLogger,
      controlToken: randomUUID(),
      signingKey: parseSigningKey(s.keys.policy.signingKey),
      frontDoorKeys: parseTrustedKeys(s.keys.mcp.trustedKey),
      host: '127.0.0.1',
      port: 0,
      maxArgumentBytes: POLICY_SETTINGS.maxArgumentBytes,
      maxRunTtlMs: 3_600_000,
      groupId: s.groupId,
      concurrency: POLICY_SETTINGS.concurrency,
      instanceId: s.name,
      sessionTimeoutMs: PAUSE_SESSION_TIMEOUT_MS,
    });
    stop = () => policy.stop();
    await policy.joined;
    return;
  }
  const executor = await startExecutor({
    events: config,
    topics,
    answerTransactions,
    redis,
    redisPrefix: s.redisPrefix,
    catalog,
    implementations,
    trustedKeys: keyRing({ policy: parseTrustedKeys(s.keys.policy.trustedKey) }),
    signingKey: parseSigningKey(s.keys.executor.signingKey),
    assertions: { issuer: 'urn:gatehouse:bench', key: parseSigningKey(s.keys.assertion.signingKey) },
    logger: serviceLogger,
    executorId: s.name,
    groupId: s.groupId,
    concurrency: s.concurrency,
    perTenantConcurrency: EXECUTOR_SETTINGS.perTenantConcurrency,
    leaseMs: EXECUTOR_SETTINGS.leaseMs,
    proposalTtlMs: EXECUTOR_SETTINGS.proposalTtlMs,
    limits: EXECUTOR_SETTINGS.limits,
    sessionTimeoutMs: PAUSE_SESSION_TIMEOUT_MS,
  });
  stop = () => executor.stop({ drainTimeoutMs: 2_000 });
  await executor.joined;
}

serveParent(
  async (op, body) => {
    if (op !== 'start') throw new Error(`unknown request ${op}`);
    await start(body as ServiceStart);
    return null;
  },
  () => ({ redisSent: Object.fromEntries(sends.sent), redisBatches: sends.batches }),
  async () => {
    await stop();
    await redis.quit();
    // Last, so the spans of the final records are flushed.
    await tracing?.shutdown();
  },
);
