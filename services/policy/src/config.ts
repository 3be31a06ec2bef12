import type { ReplicaBarrier } from '@gatehouse/state';
import type { EventsConfig, SigningKey, TrustedKeys } from '@gatehouse/events';
import type { SealingKeys } from '@gatehouse/identity';
import { ConfigError, eventsConfigOf, readConfig, variablesReadBy } from '@gatehouse/runtime';
import type { AnswerTransactions, Env } from '@gatehouse/runtime';
import type { TracingOptions } from '@gatehouse/telemetry';

export interface PolicyConfig {
  readonly events: EventsConfig;
  readonly redisUrl: string;
  /** The replicas a durable Redis write waits for (GATEHOUSE_REDIS_WAIT_REPLICAS, _TIMEOUT_MS); 0 replicas: none. */
  readonly redisBarrier: ReplicaBarrier;
  readonly redisPrefix: string;
  /** Where every ledger step of this process is appended (GATEHOUSE_LEDGER_HISTORY); none when undefined. */
  readonly ledgerHistory: string | undefined;
  /** GATEHOUSE_ANSWER_TRANSACTIONS: `auto` publishes answers in transactions where the results topic is replicated; `off`, never. */
  readonly answerTransactions: AnswerTransactions;
  readonly host: string;
  readonly port: number;
  /** The local-development control token, when set. */
  readonly controlToken: string | undefined;
  /** The identity provider trusted code proves itself to, and what its tokens must carry. */
  readonly oidc: { readonly issuer: string; readonly audience: string; readonly scope: string } | undefined;
  /**
   * People's tokens handed to runs, for token exchange: the executors' client at the IdP
   * (GATEHOUSE_EXCHANGE_CLIENT_ID), which such a token must name in `aud`, and the executors' public
   * keys it is sealed to before it is stored (GATEHOUSE_SEALING_KEYS). Off when the client is unset.
   */
  readonly delegation: { readonly clientId: string; readonly sealingKeys: SealingKeys } | undefined;
  /**
   * Operators: people whose access token names POLICY_OPERATOR_AUDIENCE and whose claims map, under
   * the approver policy (`approverPolicyFile`, else the pack's), to POLICY_OPERATOR_ROLE. With the
   * identity provider only: the control token and trusted code's tokens are never an operator's.
   */
  readonly operators: { readonly audience: string; readonly role: string } | undefined;
  /** The approver policy in place of the pack's (GATEHOUSE_APPROVER_POLICY_FILE): operators are mapped by it. */
  readonly approverPolicyFile: string | undefined;
  readonly signingKey: SigningKey;
  /** The MCP front doors' public keys (GATEHOUSE_MCP_KEYS): commands one of them proved speak for their run. */
  readonly frontDoorKeys: TrustedKeys | undefined;
  /** The tool pack to host (GATEHOUSE_TOOL_PACK). */
  readonly toolPack: string | undefined;
  /** Files that replace the pack's roles and policy table, when set. */
  readonly rolesFile: string | undefined;
  readonly policyTableFile: string | undefined;
  readonly maxArgumentBytes: number;
  readonly maxRunTtlMs: number;
  readonly groupId: string;
  readonly concurrency: number;
  readonly sessionTimeoutMs: number;
  /** How long a proposal the policy service drafts stays valid: the executor's GATEHOUSE_PROPOSAL_TTL_MS. */
  readonly proposalTtlMs: number;
  /** Span export over OTLP (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME); off without an endpoint. */
  readonly tracing: TracingOptions;
}

const VARIABLES = variablesReadBy('policy');

/** Reads and checks the policy service's settings once, at start-up (by @gatehouse/runtime's schema). */
export function policyConfigFromEnv(env: Env = process.env): PolicyConfig {
  const c = readConfig(VARIABLES, env, 'policy');
  if (c.GATEHOUSE_OIDC_ISSUER === undefined && c.GATEHOUSE_CONTROL_TOKEN === undefined) {
    throw new ConfigError([
      {
        variable: 'GATEHOUSE_OIDC_ISSUER',
        reason:
          'required unless GATEHOUSE_CONTROL_TOKEN is set: trusted code that registers runs proves itself to the IdP (client credentials)',
      },
    ]);
  }
  const events = eventsConfigOf(c);
  return {
    events,
    redisUrl: c.REDIS_URL,
    redisBarrier: { replicas: c.GATEHOUSE_REDIS_WAIT_REPLICAS, timeoutMs: c.GATEHOUSE_REDIS_WAIT_TIMEOUT_MS },
    redisPrefix: c.GATEHOUSE_REDIS_PREFIX,
    ledgerHistory: c.GATEHOUSE_LEDGER_HISTORY,
    answerTransactions: c.GATEHOUSE_ANSWER_TRANSACTIONS,
    host: c.POLICY_HOST,
    port: c.POLICY_PORT,
    controlToken: c.GATEHOUSE_CONTROL_TOKEN,
    oidc:
      c.GATEHOUSE_OIDC_ISSUER === undefined
        ? undefined
        : { issuer: c.GATEHOUSE_OIDC_ISSUER, audience: c.POLICY_OIDC_AUDIENCE, scope: c.POLICY_RUNS_SCOPE },
    delegation: delegationOf(c.GATEHOUSE_EXCHANGE_CLIENT_ID, c.GATEHOUSE_SEALING_KEYS),
    operators: c.GATEHOUSE_OIDC_ISSUER === undefined ? undefined : { audience: c.POLICY_OPERATOR_AUDIENCE, role: c.POLICY_OPERATOR_ROLE },
    approverPolicyFile: c.GATEHOUSE_APPROVER_POLICY_FILE,
    signingKey: c.GATEHOUSE_SIGNING_KEY,
    frontDoorKeys: c.GATEHOUSE_MCP_KEYS,
    toolPack: c.GATEHOUSE_TOOL_PACK,
    rolesFile: c.GATEHOUSE_ROLES_FILE,
    policyTableFile: c.GATEHOUSE_POLICY_TABLE_FILE,
    maxArgumentBytes: c.GATEHOUSE_MAX_ARGUMENT_BYTES,
    maxRunTtlMs: c.GATEHOUSE_MAX_RUN_TTL_MS,
    // Deployments sharing a cluster under different topic prefixes must not share a group.
    groupId: c.POLICY_GROUP_ID ?? `${events.topicPrefix}gatehouse-policy`,
    concurrency: c.POLICY_CONCURRENCY,
    // How soon the group notices a dead instance and hands its partitions to the others.
    sessionTimeoutMs: c.POLICY_SESSION_TIMEOUT_MS,
    proposalTtlMs: c.GATEHOUSE_PROPOSAL_TTL_MS,
    tracing: { serviceName: c.OTEL_SERVICE_NAME ?? 'gatehouse-policy', endpoint: c.OTEL_EXPORTER_OTLP_ENDPOINT },
  };
}

/** People's tokens are taken for the executors' client only when they can be sealed to the executors' keys. */
function delegationOf(clientId: string | undefined, sealingKeys: SealingKeys | undefined): PolicyConfig['delegation'] {
  if (clientId === undefined) return undefined;
  if (sealingKeys === undefined)
    throw new ConfigError([
      {
        variable: 'GATEHOUSE_SEALING_KEYS',
        reason:
          "required with GATEHOUSE_EXCHANGE_CLIENT_ID: a person's token handed to a run is stored only sealed to the executors' public keys",
      },
    ]);
  return { clientId, sealingKeys };
}
