import { keyRing } from '@gatehouse/events';
import type { EventsConfig, KeyRing, SigningKey } from '@gatehouse/events';
import { eventsConfigOf, readConfig, variablesReadBy } from '@gatehouse/runtime';
import type { Env } from '@gatehouse/runtime';
import type { TracingOptions } from '@gatehouse/telemetry';

/** The approval service's settings, read and checked once at start-up. */
export interface ApprovalConfig {
  readonly events: EventsConfig;
  readonly databaseUrl: string;
  /** PostgreSQL schema holding the service's tables; tests use one schema each. */
  readonly schema: string;
  readonly redisUrl: string;
  readonly redisPrefix: string;
  readonly host: string;
  readonly port: number;
  /** The tool pack to host (GATEHOUSE_TOOL_PACK); its approvers file is the default. */
  readonly toolPack: string | undefined;
  /** A file that replaces the pack's demo approvers, when set. */
  readonly approversFile: string | undefined;
  /** The demo switch: take the approvers file's bearer tokens too. */
  readonly demoApprovers: boolean;
  /** The OpenID Provider approvers sign in with, and the console's client there. */
  readonly oidc:
    | {
        readonly issuer: string;
        readonly clientId: string | undefined;
        readonly clientSecret: string | undefined;
        readonly audience: string;
      }
    | undefined;
  /** A file that replaces the pack's approver policy, when set. */
  readonly approverPolicyFile: string | undefined;
  readonly publicUrl: string | undefined;
  readonly sessionTtlMs: number;
  /** Where approvers' tools are told of requests and decisions; none when unset. */
  readonly webhooksFile: string | undefined;
  readonly webhookAttempts: number;
  readonly webhookBackoffMs: number;
  readonly webhookTimeoutMs: number;
  readonly signingKey: SigningKey;
  /** The policy service's public keys: the approval requests this service accepts (GATEHOUSE_POLICY_KEYS). */
  readonly trustedKeys: KeyRing;
  /** How long an approval may be used after it is given (never past the request's expiry). */
  readonly approvalValidityMs: number;
  /** How often lapsed requests are expired and unpublished decisions retried. */
  readonly sweepMs: number;
  /** How long a decision whose events were not confirmed published waits before the outbox retries it. */
  readonly outboxRetryMs: number;
  readonly groupId: string;
  /** Span export over OTLP (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME); off without an endpoint. */
  readonly tracing: TracingOptions;
}

/** The variables this service's README documents, with their defaults (the schema's, test-pinned). */
export const APPROVAL_ENV_DEFAULTS = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/gatehouse',
  APPROVALS_DB_SCHEMA: 'approvals',
  GATEHOUSE_REDIS_PREFIX: 'gh:',
  APPROVAL_HOST: '127.0.0.1',
  APPROVAL_PORT: '8093',
  APPROVAL_VALIDITY_MS: String(10 * 60 * 1000),
  APPROVAL_SWEEP_MS: '1000',
  APPROVAL_OUTBOX_RETRY_MS: '10000',
  APPROVAL_GROUP_ID: 'gatehouse-approval',
} as const;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Throws unless `name` is a plain lower-case PostgreSQL identifier (it is interpolated into SQL). */
export function checkSchemaName(name: string): string {
  if (!SCHEMA_NAME.test(name))
    throw new Error(`invalid approval configuration: schema name must match ${SCHEMA_NAME.source}, got "${name}"`);
  return name;
}

const VARIABLES = variablesReadBy('approval');

/** Reads and checks the approval service's settings once, at start-up (by @gatehouse/runtime's schema). */
export function approvalConfigFromEnv(env: Env = process.env): ApprovalConfig {
  const c = readConfig(VARIABLES, env, 'approval');
  const events = eventsConfigOf(c);
  return {
    events,
    databaseUrl: c.DATABASE_URL,
    schema: c.APPROVALS_DB_SCHEMA,
    redisUrl: c.REDIS_URL,
    redisPrefix: c.GATEHOUSE_REDIS_PREFIX,
    host: c.APPROVAL_HOST,
    port: c.APPROVAL_PORT,
    toolPack: c.GATEHOUSE_TOOL_PACK,
    approversFile: c.GATEHOUSE_APPROVERS_FILE,
    demoApprovers: c.GATEHOUSE_DEMO_APPROVERS === 'on',
    oidc:
      c.GATEHOUSE_OIDC_ISSUER === undefined
        ? undefined
        : {
            issuer: c.GATEHOUSE_OIDC_ISSUER,
            clientId: c.GATEHOUSE_OIDC_CLIENT_ID,
            clientSecret: c.GATEHOUSE_OIDC_CLIENT_SECRET,
            audience: c.APPROVAL_OIDC_AUDIENCE,
          },
    approverPolicyFile: c.GATEHOUSE_APPROVER_POLICY_FILE,
    publicUrl: c.APPROVAL_PUBLIC_URL,
    sessionTtlMs: c.APPROVAL_SESSION_TTL_MS,
    webhooksFile: c.APPROVAL_WEBHOOKS_FILE,
    webhookAttempts: c.APPROVAL_WEBHOOK_ATTEMPTS,
    webhookBackoffMs: c.APPROVAL_WEBHOOK_BACKOFF_MS,
    webhookTimeoutMs: c.APPROVAL_WEBHOOK_TIMEOUT_MS,
    signingKey: c.GATEHOUSE_SIGNING_KEY,
    // The other roles' keys too, when given: a request one of them signed is then named `wrong_role`.
    trustedKeys: keyRing({ policy: c.GATEHOUSE_POLICY_KEYS, approval: c.GATEHOUSE_APPROVAL_KEYS, executor: c.GATEHOUSE_EXECUTOR_KEYS }),
    approvalValidityMs: c.APPROVAL_VALIDITY_MS,
    sweepMs: c.APPROVAL_SWEEP_MS,
    outboxRetryMs: c.APPROVAL_OUTBOX_RETRY_MS,
    // Deployments sharing a cluster under different topic prefixes must not share a group.
    groupId: c.APPROVAL_GROUP_ID ?? `${events.topicPrefix}${APPROVAL_ENV_DEFAULTS.APPROVAL_GROUP_ID}`,
    tracing: { serviceName: c.OTEL_SERVICE_NAME ?? 'gatehouse-approval', endpoint: c.OTEL_EXPORTER_OTLP_ENDPOINT },
  };
}
