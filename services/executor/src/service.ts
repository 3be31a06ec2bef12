import { createPublicKey } from 'node:crypto';
import { AnswerScan, assertSignsAs } from '@gatehouse/events';
import type { EventsConfig, KeyRing, ParallelConsumerStats, SigningKey, Topics, TrustedKeys } from '@gatehouse/events';
import { isExchangedCredential } from '@gatehouse/contracts';
import type { Catalog, ToolImplementation } from '@gatehouse/contracts';
import { assertionJwks, CallAssertionSigner, TokenExchanger, TokenUnsealer } from '@gatehouse/identity';
import type { SealingKeys, UnsealingKeys } from '@gatehouse/identity';
import {
  consumerChecks,
  healthOf,
  SLOT_DEFAULTS,
  startConsumption,
  startEventRuntime,
  startOpsServer,
  withTeardown,
} from '@gatehouse/runtime';
import type { AnswerTransactions, StopOptions, Teardown } from '@gatehouse/runtime';
import {
  ApprovalStore,
  DelegationStore,
  ClaimLedger,
  Keyspace,
  ProposalStore,
  ReferenceClock,
  ResourceLock,
  RunRegistry,
  SlotPool,
} from '@gatehouse/state';
import type { Redis } from '@gatehouse/state';
import { GatehouseMetrics } from '@gatehouse/telemetry';
import type { Logger } from '@gatehouse/telemetry';
import { CallCredentials } from './call-credentials.js';
import type { DecisionClock } from './executor-ports.js';
import { orderHandler } from './order-handler.js';
import type { SlotLimits } from './keyed-write.js';

export interface ExecutorServiceOptions {
  readonly events: EventsConfig;
  readonly topics: Topics;
  readonly redis: Redis;
  readonly redisPrefix: string;
  readonly catalog: Catalog;
  readonly implementations: readonly ToolImplementation[];
  /**
   * Only orders signed by a key of the policy or approval service in this ring run; the rest go to
   * the execute DLQ, unanswered (GATEHOUSE_POLICY_KEYS, GATEHOUSE_APPROVAL_KEYS).
   */
  readonly trustedKeys: KeyRing;
  /** What this executor signs its answers with (GATEHOUSE_SIGNING_KEY). */
  readonly signingKey: SigningKey;
  /**
   * Call assertions: the deployment's issuer, the key they are signed with (GATEHOUSE_ASSERTION_KEY,
   * never the events key) and the other public keys the JWKS lists (GATEHOUSE_ASSERTION_KEYS).
   */
  readonly assertions: AssertionSettings;
  /** Token exchange at the company's IdP, for tools whose credential is `{ exchange }`; required when one is hosted. */
  readonly exchange?: ExchangeSettings | undefined;
  readonly logger: Logger;
  readonly executorId: string;
  readonly groupId: string;
  readonly concurrency: number;
  readonly perTenantConcurrency: number;
  readonly leaseMs: number;
  /** Whether answers go out in transactions where the results topic is replicated (default `auto`). */
  readonly answerTransactions?: AnswerTransactions;
  readonly proposalTtlMs: number;
  /** The time it decides deadlines and expiries by; Redis' clock (ReferenceClock) when not given. */
  readonly clock?: DecisionClock;
  readonly limits?: SlotLimits;
  /** How soon the group notices a dead executor (default 10 s). */
  readonly sessionTimeoutMs?: number;
  /** Where to serve /metrics, /healthz and /readyz (port 0 picks a free one); none when absent. */
  readonly http?: { readonly host: string; readonly port: number };
  /** This executor's metrics; default a fresh registry over the catalog. */
  readonly metrics?: GatehouseMetrics;
}

export interface AssertionSettings {
  readonly issuer: string;
  readonly key: SigningKey;
  readonly published?: TrustedKeys | undefined;
}

/** The executors' client at the IdP, which exchanges a run's person's token for a system of record's. */
export interface ExchangeSettings {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The executors' public keys people's tokens are sealed to in Redis (GATEHOUSE_SEALING_KEYS): refresh tokens too. */
  readonly sealingKeys: SealingKeys;
  /** This executor's private keys, which open them (GATEHOUSE_UNSEALING_KEYS). */
  readonly unsealingKeys: UnsealingKeys;
}

/** The JWKS path of the ops endpoint (RFC 8615's well-known location). */
export const JWKS_PATH = '/.well-known/jwks.json';

/**
 * The executors' call-assertion key set: this executor's public key and the ones listed beside it.
 * A listed key under this executor's own key id must be its key: two keys under one id would make
 * a verifier's choice of key ambiguous.
 */
export function executorJwks(settings: AssertionSettings, eventsKey: SigningKey): ReturnType<typeof assertionJwks> {
  if (settings.key.keyId === eventsKey.keyId)
    throw new Error(
      `the call assertion key and the events signing key share the key id ${eventsKey.keyId}; give the assertion key one of its own`,
    );
  const own = createPublicKey(settings.key.privateKey);
  if (own.equals(createPublicKey(eventsKey.privateKey)))
    throw new Error('the call assertion key is the events signing key; give assertions a key of their own');
  const keys = new Map(settings.published ?? []);
  const listed = keys.get(settings.key.keyId);
  if (listed !== undefined && !listed.equals(own))
    throw new Error(`GATEHOUSE_ASSERTION_KEYS lists another key under this executor's key id ${settings.key.keyId}`);
  keys.set(settings.key.keyId, own);
  return assertionJwks(keys);
}

export interface RunningExecutor {
  readonly joined: Promise<void>;
  /** Base URL of /metrics, /healthz and /readyz; undefined when not served. */
  readonly url: string | undefined;
  stats(): ParallelConsumerStats;
  /** Closes the ops endpoint, drains running records (default 10 s), then disconnects; once, however often it is called. */
  stop(options?: StopOptions): Promise<void>;
}

/** Only tools of the loaded catalog run: the contract object must be the catalog's own. */
function hostedImplementations(catalog: Catalog, implementations: readonly ToolImplementation[]): Map<string, ToolImplementation> {
  const hosted = new Map<string, ToolImplementation>();
  for (const implementation of implementations) {
    if (catalog.get(implementation.contract.address) === implementation.contract)
      hosted.set(implementation.contract.address, implementation);
  }
  return hosted;
}

/** Wires an executor: one member of the executors' consumer group on gatehouse.execute. */
export async function startExecutor(options: ExecutorServiceOptions): Promise<RunningExecutor> {
  const logger = options.logger.child({ executor: options.executorId });
  const metrics = options.metrics ?? new GatehouseMetrics({ tools: options.catalog.tools() });
  assertSignsAs(options.trustedKeys, options.signingKey, 'executor');
  const jwks = executorJwks(options.assertions, options.signingKey);
  const signer = await CallAssertionSigner.create(options.assertions.issuer, options.assertions.key);
  const hosted = hostedImplementations(options.catalog, options.implementations);
  const keys = new Keyspace(options.redisPrefix);
  const exchanger = await exchangerFor(hosted, options.exchange, { redis: options.redis, keys, logger }, metrics);
  return withTeardown(async (teardown) => {
    const runtime = await startEventRuntime({
      events: options.events,
      topics: options.topics,
      clientId: `gatehouse-executor-${options.executorId}`,
      contracts: options.catalog.tools(),
      logger,
      signingKey: options.signingKey,
      // An answer commits only while its claim's renewal holds; the broker aborts a transaction
      // left open by a stalled or dead executor within the claim's lease.
      ...(options.answerTransactions === 'off'
        ? {}
        : { transactions: { roles: ['results'], timeoutMs: Math.floor(options.leaseMs * 0.8) } }),
    });
    teardown.add(runtime.stop);
    const clock = options.clock ?? (await referenceClock(options.redis, logger, teardown));

    const ledger = new ClaimLedger(options.redis, keys);
    const consumption = await startConsumption({
      runtime,
      role: 'execute',
      groupId: options.groupId,
      // An order older than the executors' memory of answered commands could be answered twice.
      trust: { keys: options.trustedKeys, answeredRetentionMs: ledger.retentionMs },
      handle: orderHandler({
        catalog: options.catalog,
        implementations: hosted,
        ledger,
        proposals: new ProposalStore(options.redis, keys),
        approvals: new ApprovalStore(options.redis, keys),
        runs: new RunRegistry(options.redis, keys),
        slots: new SlotPool(options.redis, keys),
        locks: new ResourceLock(options.redis, keys),
        limits: options.limits ?? { tenantDefault: SLOT_DEFAULTS.tenant, tenants: {}, run: SLOT_DEFAULTS.run },
        publisher: runtime.publisher,
        answers: new AnswerScan({
          kafka: runtime.kafka,
          admin: runtime.admin,
          serde: runtime.serde,
          trust: { keys: options.trustedKeys },
          publisher: runtime.publisher,
          logger,
        }),
        executorId: options.executorId,
        leaseMs: options.leaseMs,
        proposalTtlMs: options.proposalTtlMs,
        logger,
        metrics,
        credentials: new CallCredentials(signer, options.executorId, clock, metrics, exchanger),
        clock,
      }),
      logger,
      metrics,
      maxConcurrency: options.concurrency,
      maxPerKey: options.perTenantConcurrency,
      sessionTimeoutMs: options.sessionTimeoutMs,
    });
    teardown.add(consumption.stop);

    let url: string | undefined;
    if (options.http !== undefined) {
      const health = healthOf(consumerChecks(runtime, consumption, options.redis));
      const ops = await startOpsServer({ ...options.http, health, metrics, logger, documents: { [JWKS_PATH]: jwks } });
      teardown.add(ops.stop);
      url = ops.url;
    }
    return { joined: consumption.joined, url, stats: consumption.stats, stop: (stopOptions) => teardown.close(stopOptions) };
  });
}

/** Redis' clock, read again until the executor stops. */
async function referenceClock(redis: Redis, logger: Logger, teardown: Teardown): Promise<DecisionClock> {
  const clock = await ReferenceClock.start(redis, logger);
  teardown.add(() => clock.stop());
  // A machine's clock more than a second off is worth an operator's look (its NTP), though nothing here depends on it.
  if (Math.abs(clock.offsetMs) > 1_000)
    logger.warn({ offset_ms: clock.offsetMs }, "this machine's clock is off Redis' clock; deadlines and expiries are decided by Redis'");
  else logger.info({ offset_ms: clock.offsetMs }, "deciding deadlines and expiries by Redis' clock");
  return clock;
}

/**
 * The token exchanger, when a hosted tool needs one. A tool whose credential is `{ exchange }` with
 * no exchange configured is refused at start: every one of its calls would fail.
 */
async function exchangerFor(
  hosted: ReadonlyMap<string, ToolImplementation>,
  settings: ExchangeSettings | undefined,
  state: { readonly redis: Redis; readonly keys: Keyspace; readonly logger: Logger },
  metrics: GatehouseMetrics,
): Promise<TokenExchanger | undefined> {
  const exchanging = [...hosted.values()]
    .filter((implementation) => isExchangedCredential(implementation.credential))
    .map((i) => i.contract.address);
  if (exchanging.length === 0) return undefined;
  if (settings === undefined) {
    throw new Error(
      `${exchanging.join(', ')} call their system of record with a token exchanged at the IdP, and no exchange is configured: set GATEHOUSE_OIDC_ISSUER, GATEHOUSE_EXCHANGE_CLIENT_ID, GATEHOUSE_EXCHANGE_CLIENT_SECRET, GATEHOUSE_SEALING_KEYS and GATEHOUSE_UNSEALING_KEYS`,
    );
  }
  const { sealingKeys, unsealingKeys, ...client } = settings;
  // Throws at start when none of this executor's keys is among the sealing keys: it could open nothing.
  const unsealer = new TokenUnsealer(sealingKeys, unsealingKeys);
  const delegation = new DelegationStore(state.redis, state.keys, unsealer, (context, reason) =>
    state.logger.warn(
      { run_id: context.runId, use: context.use, reason },
      "a person's sealed token could not be opened (sealed to a key this executor no longer holds, or changed): treated as absent",
    ),
  );
  return TokenExchanger.discover({ ...client, delegation, onStep: (step) => metrics.tokenExchange(step) });
}
