import { eventsConfigFromEnv, keyRing } from '@gatehouse/events';
import type { EventsConfig, KeyRing, SigningKey } from '@gatehouse/events';
import type { SealingKeys } from '@gatehouse/identity';
import { ConfigError, readConfig, variablesReadBy } from '@gatehouse/runtime';
import type { Env } from '@gatehouse/runtime';
import type { TracingOptions } from '@gatehouse/telemetry';

export interface McpConfig {
  /** Kafka and the registry, as the front door's client reaches them (it creates no topics). */
  readonly events: EventsConfig;
  readonly redisUrl: string;
  readonly redisPrefix: string;
  readonly toolPack: string | undefined;
  readonly host: string;
  readonly port: number;
  /** Unset: the address listened on. */
  readonly publicUrl: string | undefined;
  /** Unset: loopback names at the port listened on, and the public URL's host. */
  readonly allowedHosts: readonly string[] | undefined;
  /** Unset: the allowed hosts' http and https origins. */
  readonly allowedOrigins: readonly string[] | undefined;
  readonly waitMs: number;
  readonly progressMs: number;
  readonly taskTtlMs: number;
  readonly taskLeaseMs: number;
  readonly listTtlMs: number;
  /** People sign in through their MCP client at this IdP (with an agent policy); unset: run tokens only. */
  readonly signIn:
    | {
        readonly issuer: string;
        readonly agentPolicyFile: string;
        readonly scope: string;
        readonly maxRunTtlMs: number;
        /**
         * The executors' client at the IdP (GATEHOUSE_EXCHANGE_CLIENT_ID): a token naming it is kept for token
         * exchange, sealed to the executors' public keys (GATEHOUSE_SEALING_KEYS). Unset: no token is kept.
         */
        readonly delegation: { readonly clientId: string; readonly sealingKeys: SealingKeys } | undefined;
      }
    | undefined;
  /** The run token of the stdio transport. */
  readonly stdioToken: string | undefined;
  /** The run key of the stdio transport (GATEHOUSE_RUN_KEY): its run's commands are proved with it. */
  readonly stdioRunKey: string | undefined;
  /** What the HTTP endpoint proves its clients' commands with (MCP_SIGNING_KEY). */
  readonly signingKey: SigningKey | undefined;
  /** The policy, approval and executor keys: only answers they signed reach an MCP client. */
  readonly resultKeys: KeyRing;
  /** Span export over OTLP (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME); off without an endpoint. */
  readonly tracing: TracingOptions;
}

const VARIABLES = variablesReadBy('mcp');

const list = (raw: string | undefined): string[] | undefined =>
  raw === undefined
    ? undefined
    : raw
        .split(',')
        .map((entry) => entry.trim().toLowerCase())
        .filter((entry) => entry !== '');

/** Sign-in needs the IdP, the agent policy and a stable public URL (the tokens' audience), together. */
function signInOf(
  issuer: string | undefined,
  policyFile: string | undefined,
  publicUrl: string | undefined,
  scope: string,
  maxRunTtlMs: number,
  exchangeClientId: string | undefined,
  sealingKeys: SealingKeys | undefined,
): McpConfig['signIn'] {
  if (policyFile === undefined) return undefined;
  if (issuer === undefined)
    throw new ConfigError([
      { variable: 'MCP_AGENT_POLICY_FILE', reason: 'needs GATEHOUSE_OIDC_ISSUER: the identity provider people sign in at' },
    ]);
  if (publicUrl === undefined)
    throw new ConfigError([
      { variable: 'MCP_AGENT_POLICY_FILE', reason: 'needs MCP_PUBLIC_URL: tokens are checked for the audience <MCP_PUBLIC_URL>/mcp' },
    ]);
  if (exchangeClientId === undefined) return { issuer, agentPolicyFile: policyFile, scope, maxRunTtlMs, delegation: undefined };
  if (sealingKeys === undefined)
    throw new ConfigError([
      {
        variable: 'GATEHOUSE_SEALING_KEYS',
        reason:
          "required with GATEHOUSE_EXCHANGE_CLIENT_ID and MCP_AGENT_POLICY_FILE: a signed-in person's token is kept for token exchange only sealed to the executors' public keys",
      },
    ]);
  return { issuer, agentPolicyFile: policyFile, scope, maxRunTtlMs, delegation: { clientId: exchangeClientId, sealingKeys } };
}

/** Reads and checks the front door's settings once, at start-up. */
export function mcpConfigFromEnv(env: Env = process.env): McpConfig {
  const c = readConfig(VARIABLES, env, 'mcp');
  const events = eventsConfigFromEnv({
    KAFKA_BROKERS: c.KAFKA_BROKERS.join(','),
    KAFKA_SASL_MECHANISM: c.KAFKA_SASL_MECHANISM,
    KAFKA_SASL_USERNAME: c.KAFKA_SASL_USERNAME,
    KAFKA_SASL_PASSWORD: c.KAFKA_SASL_PASSWORD,
    KAFKA_SSL: c.KAFKA_SSL,
    SCHEMA_REGISTRY_URL: c.SCHEMA_REGISTRY_URL,
    GATEHOUSE_TOPIC_PREFIX: c.GATEHOUSE_TOPIC_PREFIX,
  });
  return {
    events,
    redisUrl: c.REDIS_URL,
    redisPrefix: c.GATEHOUSE_REDIS_PREFIX,
    toolPack: c.GATEHOUSE_TOOL_PACK,
    host: c.MCP_HOST,
    port: c.MCP_PORT,
    publicUrl: c.MCP_PUBLIC_URL,
    allowedHosts: list(c.MCP_ALLOWED_HOSTS),
    allowedOrigins: list(c.MCP_ALLOWED_ORIGINS),
    waitMs: c.MCP_WAIT_MS,
    progressMs: c.MCP_PROGRESS_MS,
    taskTtlMs: c.MCP_TASK_TTL_MS,
    taskLeaseMs: c.MCP_TASK_LEASE_MS,
    listTtlMs: c.MCP_LIST_TTL_MS,
    signIn: signInOf(
      c.GATEHOUSE_OIDC_ISSUER,
      c.MCP_AGENT_POLICY_FILE,
      c.MCP_PUBLIC_URL,
      c.MCP_OIDC_SCOPE,
      c.GATEHOUSE_MAX_RUN_TTL_MS,
      c.GATEHOUSE_EXCHANGE_CLIENT_ID,
      c.GATEHOUSE_SEALING_KEYS,
    ),
    stdioToken: c.GATEHOUSE_MCP_TOKEN,
    stdioRunKey: c.GATEHOUSE_RUN_KEY,
    signingKey: c.MCP_SIGNING_KEY,
    resultKeys: keyRing({ policy: c.GATEHOUSE_POLICY_KEYS, approval: c.GATEHOUSE_APPROVAL_KEYS, executor: c.GATEHOUSE_EXECUTOR_KEYS }),
    tracing: { serviceName: c.OTEL_SERVICE_NAME ?? 'gatehouse-mcp', endpoint: c.OTEL_EXPORTER_OTLP_ENDPOINT },
  };
}
