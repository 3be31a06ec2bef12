import type { EventsConfig, SigningKey, Topics, TrustedKeys } from '@gatehouse/events';
import type { Catalog } from '@gatehouse/contracts';
import { rolesGranting } from '@gatehouse/governance';
import type { PolicyTable, Roles } from '@gatehouse/governance';
import { consumerChecks, healthOf, ownAnswerScan, startConsumption, startEventRuntime, withTeardown } from '@gatehouse/runtime';
import type { AnswerTransactions, StopOptions } from '@gatehouse/runtime';
import {
  ApprovalStore,
  ClaimLedger,
  DelegationWriter,
  Keyspace,
  ProposalStore,
  RateLimiter,
  RunRegistry,
  RunTokens,
} from '@gatehouse/state';
import type { Redis, TokenSeal } from '@gatehouse/state';
import { GatehouseMetrics } from '@gatehouse/telemetry';
import type { Logger } from '@gatehouse/telemetry';
import { commandHandler } from './command-handler.js';
import { CommandProofs } from './command-proofs.js';
import type { AccessTokenVerifier } from '@gatehouse/identity';
import { buildControlApi } from './control-api.js';
import { Operators } from './operators.js';
import type { OperatorIdentity } from './operators.js';
import { TrustedCallers } from './trusted-callers.js';
import type { TrustedCallerIdentity } from './trusted-callers.js';

export interface PolicyServiceOptions {
  readonly events: EventsConfig;
  readonly topics: Topics;
  /** Whether answers go out in transactions where the results topic is replicated (default `auto`). */
  readonly answerTransactions?: AnswerTransactions;
  readonly redis: Redis;
  readonly redisPrefix: string;
  readonly catalog: Catalog;
  readonly roles: Roles;
  readonly table: PolicyTable;
  readonly logger: Logger;
  /** The local-development control token; off (unset) in deploy/: trusted code proves itself to the IdP. */
  readonly controlToken?: string;
  /** Trusted code proved by the identity provider (client credentials with the runs scope). */
  readonly callerIdentity?: TrustedCallerIdentity;
  /**
   * People's tokens for token exchange: a run may be handed its person's access token (one that
   * names the executors' client, GATEHOUSE_EXCHANGE_CLIENT_ID, in `aud`), checked here by
   * `verifier` and kept for the executors, sealed by `sealer` to their public keys
   * (GATEHOUSE_SEALING_KEYS): this service cannot read it back. Off when absent: such a token is refused.
   */
  readonly subjectTokens?: { readonly verifier: AccessTokenVerifier; readonly sealer: TokenSeal };
  /**
   * Operators, who look up and resolve operations: people proved by the identity provider whose
   * claims give them the operator role, each in their tenants. Absent: the operator routes refuse
   * everyone (the control token and trusted code are never operators).
   */
  readonly operatorIdentity?: OperatorIdentity;
  /** What this service signs its orders, approval requests and answers with (GATEHOUSE_SIGNING_KEY). */
  readonly signingKey: SigningKey;
  /**
   * The MCP front doors' public keys (GATEHOUSE_MCP_KEYS): a command one of them proved speaks for
   * the run it names. Absent: only a run's own key proves its commands.
   */
  readonly frontDoorKeys?: TrustedKeys;
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly maxArgumentBytes: number;
  readonly maxRunTtlMs: number;
  readonly groupId: string;
  readonly concurrency: number;
  /** Consumer group session timeout (default 10 s): how soon a dead instance's partitions move. */
  readonly sessionTimeoutMs?: number;
  readonly grantValidityMs?: number;
  /** How long a proposal drafted here stays valid; main.ts passes GATEHOUSE_PROPOSAL_TTL_MS, the executor's too. Default 15 min. */
  readonly proposalTtlMs?: number;
  readonly instanceId?: string;
  /** This instance's metrics, served at GET /metrics; default a fresh registry over the catalog. */
  readonly metrics?: GatehouseMetrics;
}

export interface RunningPolicyService {
  /** Base URL of the control API. */
  readonly url: string;
  readonly joined: Promise<void>;
  /** Closes the control API, drains the consumer, then disconnects; once, however often it is called. */
  stop(options?: StopOptions): Promise<void>;
}

/** Wires the policy service: provisions topics and schemas, then consumes commands and serves the control API. */
export async function startPolicyService(options: PolicyServiceOptions): Promise<RunningPolicyService> {
  const logger = options.logger.child({ instance: options.instanceId ?? 'policy' });
  const metrics = options.metrics ?? new GatehouseMetrics({ tools: options.catalog.tools() });
  return withTeardown(async (teardown) => {
    const runtime = await startEventRuntime({
      events: options.events,
      topics: options.topics,
      clientId: `gatehouse-policy-${options.instanceId ?? 'main'}`,
      contracts: options.catalog.tools(),
      logger,
      signingKey: options.signingKey,
      // Its answers (refusals, and the notice that a call waits for a person) commit only while the
      // command's claim renewal holds; orders and approval requests go out plainly.
      ...(options.answerTransactions === 'off' ? {} : { transactions: { roles: ['results'] } }),
    });
    teardown.add(runtime.stop);

    const keys = new Keyspace(options.redisPrefix);
    const runs = new RunRegistry(options.redis, keys);
    const deps = decisionDeps(options, keys, runs);
    const answers = ownAnswerScan(runtime, 'policy', options.signingKey, logger);
    const consumption = await startConsumption({
      runtime,
      role: 'commands',
      groupId: options.groupId,
      handle: commandHandler(
        deps,
        new CommandProofs(runs, options.frontDoorKeys ?? new Map()),
        runtime.publisher,
        logger.child({ component: 'decide' }),
        metrics,
        answers,
      ),
      logger,
      metrics,
      maxConcurrency: options.concurrency,
      sessionTimeoutMs: options.sessionTimeoutMs,
    });
    teardown.add(consumption.stop);

    const api = buildControlApi({
      runs,
      runTokens: new RunTokens(options.redis, keys, runs),
      catalog: options.catalog,
      roles: options.roles,
      callers: new TrustedCallers(options.callerIdentity, options.controlToken),
      ...(options.callerIdentity === undefined ? {} : { personIssuer: options.callerIdentity.accessTokens.issuer }),
      ...(options.subjectTokens === undefined
        ? {}
        : {
            delegation: {
              verifier: options.subjectTokens.verifier,
              store: new DelegationWriter(options.redis, keys, options.subjectTokens.sealer),
            },
          }),
      maxRunTtlMs: options.maxRunTtlMs,
      logger,
      metrics,
      health: healthOf(consumerChecks(runtime, consumption, options.redis)),
      operations: {
        idempotency: deps.idempotency,
        operators: new Operators(options.operatorIdentity),
        // Signed by the publisher, as every result this service publishes.
        publish: (result, headers) => runtime.publisher.publish('results', result.run_id, result, headers),
        answers,
      },
    });
    teardown.add(() => api.close());
    const url = await api.listen({ host: options.host, port: options.port });
    return { url, joined: consumption.joined, stop: (stopOptions) => teardown.close(stopOptions) };
  });
}

/** What deciding a command needs: the catalog and rules, and the stores of runs, proposals, approvals and claims. */
function decisionDeps(options: PolicyServiceOptions, keys: Keyspace, runs: RunRegistry) {
  const ledger = new ClaimLedger(options.redis, keys);
  return {
    catalog: options.catalog,
    runs,
    limiter: new RateLimiter(options.redis, keys),
    maxArgumentBytes: options.maxArgumentBytes,
    rolesGranting: rolesGranting(options.roles),
    table: options.table,
    proposals: new ProposalStore(options.redis, keys),
    approvals: new ApprovalStore(options.redis, keys),
    idempotency: ledger,
    ledger,
    grantValidityMs: options.grantValidityMs ?? 10 * 60 * 1000,
    proposalTtlMs: options.proposalTtlMs ?? 15 * 60 * 1000,
  };
}
