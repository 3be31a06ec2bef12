import type { ReplicaBarrier } from '@gatehouse/state';
import { hostname } from 'node:os';
import { keyRing } from '@gatehouse/events';
import type { EventsConfig, KeyRing, SigningKey } from '@gatehouse/events';
import { ConfigError, eventsConfigOf, readConfig, variablesReadBy } from '@gatehouse/runtime';
import type { AnswerTransactions, Config, Env } from '@gatehouse/runtime';
import type { TracingOptions } from '@gatehouse/telemetry';
import type { AssertionSettings, ExchangeSettings } from './service.js';
import type { SlotLimits } from './keyed-write.js';

export interface ExecutorConfig {
  readonly events: EventsConfig;
  readonly redisUrl: string;
  /** The replicas a durable Redis write waits for (GATEHOUSE_REDIS_WAIT_REPLICAS, _TIMEOUT_MS); 0 replicas: none. */
  readonly redisBarrier: ReplicaBarrier;
  readonly redisPrefix: string;
  /** Where every ledger step of this process is appended (GATEHOUSE_LEDGER_HISTORY); none when undefined. */
  readonly ledgerHistory: string | undefined;
  /** The tool pack to host (GATEHOUSE_TOOL_PACK). */
  readonly toolPack: string | undefined;
  readonly executorId: string;
  readonly groupId: string;
  readonly concurrency: number;
  readonly perTenantConcurrency: number;
  readonly leaseMs: number;
  /** GATEHOUSE_ANSWER_TRANSACTIONS: `auto` publishes answers in transactions where the results topic is replicated; `off`, never. */
  readonly answerTransactions: AnswerTransactions;
  readonly sessionTimeoutMs: number;
  readonly proposalTtlMs: number;
  readonly limits: SlotLimits;
  readonly port: number;
  readonly host: string;
  /** The keys whose orders this executor runs: the policy and approval services' (GATEHOUSE_POLICY_KEYS, GATEHOUSE_APPROVAL_KEYS). */
  readonly trustedKeys: KeyRing;
  /** What this executor signs its answers with (GATEHOUSE_SIGNING_KEY). */
  readonly signingKey: SigningKey;
  /** Call assertions (GATEHOUSE_ASSERTION_ISSUER, GATEHOUSE_ASSERTION_KEY, GATEHOUSE_ASSERTION_KEYS). */
  readonly assertions: AssertionSettings;
  /**
   * Token exchange at the IdP (GATEHOUSE_OIDC_ISSUER, GATEHOUSE_EXCHANGE_CLIENT_ID and _SECRET), with the keys people's
   * tokens are sealed to and opened with (GATEHOUSE_SEALING_KEYS, GATEHOUSE_UNSEALING_KEYS); off when unset.
   */
  readonly exchange: ExchangeSettings | undefined;
  /** Span export over OTLP (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME); off without an endpoint. */
  readonly tracing: TracingOptions;
}

const VARIABLES = variablesReadBy('executor');

/** Reads and checks the executor's settings once, at start-up (by @gatehouse/runtime's schema). */
export function executorConfigFromEnv(env: Env = process.env): ExecutorConfig {
  const c = readConfig(VARIABLES, env, 'executor');
  const events = eventsConfigOf(c);
  return {
    exchange: exchangeSettings(c),
    events,
    redisUrl: c.REDIS_URL,
    redisBarrier: { replicas: c.GATEHOUSE_REDIS_WAIT_REPLICAS, timeoutMs: c.GATEHOUSE_REDIS_WAIT_TIMEOUT_MS },
    redisPrefix: c.GATEHOUSE_REDIS_PREFIX,
    ledgerHistory: c.GATEHOUSE_LEDGER_HISTORY,
    toolPack: c.GATEHOUSE_TOOL_PACK,
    executorId: c.EXECUTOR_ID ?? `${hostname()}-${process.pid}`,
    // Deployments sharing a cluster under different topic prefixes must not share a group.
    groupId: c.EXECUTOR_GROUP_ID ?? `${events.topicPrefix}gatehouse-executor`,
    concurrency: c.EXECUTOR_CONCURRENCY,
    perTenantConcurrency: c.EXECUTOR_TENANT_CONCURRENCY,
    leaseMs: c.EXECUTOR_LEASE_MS,
    answerTransactions: c.GATEHOUSE_ANSWER_TRANSACTIONS,
    sessionTimeoutMs: c.EXECUTOR_SESSION_TIMEOUT_MS,
    proposalTtlMs: c.GATEHOUSE_PROPOSAL_TTL_MS,
    limits: {
      tenantDefault: c.GATEHOUSE_TENANT_SLOTS,
      tenants: c.GATEHOUSE_TENANT_SLOT_LIMITS,
      run: c.GATEHOUSE_RUN_SLOTS,
    },
    port: c.EXECUTOR_PORT,
    host: c.EXECUTOR_HOST,
    // The executors' own keys too, when given: an order one of them signed is then named `wrong_role`.
    trustedKeys: keyRing({ policy: c.GATEHOUSE_POLICY_KEYS, approval: c.GATEHOUSE_APPROVAL_KEYS, executor: c.GATEHOUSE_EXECUTOR_KEYS }),
    signingKey: c.GATEHOUSE_SIGNING_KEY,
    assertions: { issuer: c.GATEHOUSE_ASSERTION_ISSUER, key: c.GATEHOUSE_ASSERTION_KEY, published: c.GATEHOUSE_ASSERTION_KEYS },
    tracing: { serviceName: c.OTEL_SERVICE_NAME ?? 'gatehouse-executor', endpoint: c.OTEL_EXPORTER_OTLP_ENDPOINT },
  };
}

/** Token exchange is on when its client is named; then the issuer, the secret and the sealing keys are required too. */
function exchangeSettings(
  c: Config<
    | 'GATEHOUSE_OIDC_ISSUER'
    | 'GATEHOUSE_EXCHANGE_CLIENT_ID'
    | 'GATEHOUSE_EXCHANGE_CLIENT_SECRET'
    | 'GATEHOUSE_SEALING_KEYS'
    | 'GATEHOUSE_UNSEALING_KEYS'
  >,
): ExchangeSettings | undefined {
  const clientId = c.GATEHOUSE_EXCHANGE_CLIENT_ID;
  if (clientId === undefined) return undefined;
  const {
    GATEHOUSE_OIDC_ISSUER: issuer,
    GATEHOUSE_EXCHANGE_CLIENT_SECRET: clientSecret,
    GATEHOUSE_SEALING_KEYS: sealingKeys,
    GATEHOUSE_UNSEALING_KEYS: unsealingKeys,
  } = c;
  const why = {
    GATEHOUSE_OIDC_ISSUER: 'the IdP that exchanges the tokens',
    GATEHOUSE_EXCHANGE_CLIENT_SECRET: "how the executors' client proves itself to the IdP",
    GATEHOUSE_SEALING_KEYS: "the executors' public keys the people's tokens kept in Redis are sealed to",
    GATEHOUSE_UNSEALING_KEYS: "this executor's private keys, which open the people's sealed tokens",
  } as const;
  const missing = (Object.keys(why) as (keyof typeof why)[])
    .filter((name) => c[name] === undefined)
    .map((variable) => ({ variable, reason: `required with GATEHOUSE_EXCHANGE_CLIENT_ID: ${why[variable]}` }));
  if (issuer === undefined || clientSecret === undefined || sealingKeys === undefined || unsealingKeys === undefined)
    throw new ConfigError(missing);
  return { issuer, clientId, clientSecret, sealingKeys, unsealingKeys };
}
