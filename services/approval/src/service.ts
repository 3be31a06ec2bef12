import pg from 'pg';
import type { Catalog } from '@gatehouse/contracts';
import { assertSignsAs, EventSigner } from '@gatehouse/events';
import type { EventsConfig, KeyRing, SigningKey, Topics } from '@gatehouse/events';
import {
  consumerChecks,
  healthOf,
  ownAnswerScan,
  postgresReady,
  startConsumption,
  startEventRuntime,
  withTeardown,
} from '@gatehouse/runtime';
import type { Health, StopOptions, Teardown } from '@gatehouse/runtime';
import { ApprovalStore, isActive, Keyspace, RunRegistry } from '@gatehouse/state';
import type { Redis } from '@gatehouse/state';
import { GatehouseMetrics } from '@gatehouse/telemetry';
import type { Logger } from '@gatehouse/telemetry';
import { buildApi } from './api.js';
import { ApprovalDecisions } from './approval-decisions.js';
import { ApproverAuth } from './approver-auth.js';
import type { ApproverIdentity } from './approver-auth.js';
import type { Approvers } from './approvers.js';
import { loadConsoleAssets } from './console-assets.js';
import type { ConsoleAssets } from './console-assets.js';
import { ensureDatabase } from './db.js';
import { DecisionPublisher } from './decision-publisher.js';
import { migrate } from './migrations.js';
import { requestHandler } from './request-handler.js';
import { RequestRepository } from './request-repository.js';
import { SessionStore } from './sessions.js';
import { registerSignIn, sessionCookie } from './sign-in.js';
import { startSweeper } from './sweeper.js';
import { startWebhookDispatcher, WebhookOutbox } from './webhooks.js';
import type { WebhookSettings } from './webhooks.js';
import { tablesIn } from './db.js';

export interface ApprovalServiceOptions {
  readonly events: EventsConfig;
  readonly topics: Topics;
  readonly databaseUrl: string;
  /** PostgreSQL schema of the service's tables. */
  readonly schema: string;
  readonly redis: Redis;
  readonly redisPrefix: string;
  /**
   * People, as the company's identity provider proves them: bearer access tokens, and browser
   * sign-in when it has the console's client.
   */
  readonly identity?: ApproverIdentity;
  /** Approvers of a bearer-token file: demo and test use only (the demo switch); a start with them logs it loudly. */
  readonly approvers?: Approvers;
  /** The console's address as browsers reach it, for its redirect URI (default: the address it listens on). */
  readonly publicUrl?: string;
  /** How long a console session lasts at most (default 8 h). */
  readonly sessionTtlMs?: number;
  /** Approvers' tools told of every request, decision, withdrawal and expiry (Standard Webhooks). */
  readonly webhooks?: WebhookSettings;
  /** What this service signs the orders of approved writes, its decisions and its answers with (GATEHOUSE_SIGNING_KEY). */
  readonly signingKey: SigningKey;
  /**
   * Only approval requests a policy service key of this ring signed are shown to people
   * (GATEHOUSE_POLICY_KEYS); a request signed by another role's key it holds is refused as `wrong_role`.
   */
  readonly trustedKeys: KeyRing;
  /** Names the preview tool of each commit tool, for `next` in a refusal. */
  readonly catalog: Catalog;
  readonly logger: Logger;
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly approvalValidityMs: number;
  readonly sweepMs: number;
  /** How long an unconfirmed publish of a decision waits before the outbox retries it (default 10 s). */
  readonly outboxRetryMs?: number;
  readonly groupId: string;
  /** Consumer group session timeout (default 10 s, as the other services): how soon a dead instance's partitions move. */
  readonly sessionTimeoutMs?: number;
  readonly instanceId?: string;
  readonly assets?: ConsoleAssets;
  /** This instance's metrics, served at GET /metrics; default a fresh registry over the catalog. */
  readonly metrics?: GatehouseMetrics;
}

export interface RunningApprovalService {
  /** Base URL of the API and console. */
  readonly url: string;
  readonly joined: Promise<void>;
  /** Runs one expiry and outbox sweep now. */
  sweep(): Promise<void>;
  /** Closes the API, drains the consumer, stops sweeping, then disconnects; once, however often it is called. */
  stop(options?: StopOptions): Promise<void>;
}

/**
 * Wires the approval service: migrates its PostgreSQL schema, provisions topics and schemas,
 * retries any decision left unpublished, then consumes approval requests, sweeps expiries and
 * serves the API and console.
 */
export async function startApprovalService(options: ApprovalServiceOptions): Promise<RunningApprovalService> {
  const instance = options.instanceId ?? 'approval';
  const logger = options.logger.child({ instance });
  const assets = options.assets ?? loadConsoleAssets();
  checkApprovers(options, logger);
  const metrics = options.metrics ?? new GatehouseMetrics({ tools: options.catalog.tools() });

  assertSignsAs(options.trustedKeys, options.signingKey, 'approval');
  await ensureDatabase(options.databaseUrl);
  return withTeardown(async (teardown) => {
    const pool = await openDatabase(options, logger, teardown);

    const runtime = await startEventRuntime({
      events: options.events,
      topics: options.topics,
      clientId: `gatehouse-approval-${instance}`,
      contracts: options.catalog.tools(),
      logger,
      signingKey: options.signingKey,
    });
    teardown.add(runtime.stop);

    const repository = new RequestRepository(pool, options.schema);
    const keys = new Keyspace(options.redisPrefix);
    const runs = new RunRegistry(options.redis, keys);
    const runIsActive = activeRuns(runs);
    let listening = '';
    const publicUrl = (): string => options.publicUrl ?? listening;
    const webhooks = startWebhooks(options, pool, publicUrl, logger, metrics, teardown);
    const trust = { signer: new EventSigner(options.signingKey), keys: options.trustedKeys };
    const decisions = new DecisionPublisher(
      repository,
      runtime.publisher,
      new ApprovalStore(options.redis, keys),
      options.catalog,
      trust,
      logger.child({ component: 'outbox' }),
      ownAnswerScan(runtime, 'approval', options.signingKey, logger),
      metrics,
      webhooks,
    );
    const sweeper = startSweeper({
      repository,
      decisions,
      logger: logger.child({ component: 'sweeper' }),
      intervalMs: options.sweepMs,
      staleClaimMs: options.outboxRetryMs ?? 10_000,
      metrics,
      runIsActive,
    });
    teardown.add(() => sweeper.stop());
    // Decisions a previous process committed but did not confirm published go out before new work.
    await sweeper.sweep();

    const consumption = await startConsumption({
      runtime,
      role: 'approvalsRequested',
      groupId: options.groupId,
      handle: requestHandler(repository, decisions, runtime.publisher, logger.child({ component: 'requests' }), webhooks),
      // A forged request could show people a proposal nobody made, or answer a real command.
      trust: { keys: options.trustedKeys },
      logger,
      metrics,
      sessionTimeoutMs: options.sessionTimeoutMs,
    });
    teardown.add(consumption.stop);

    const api = serveDecisions(options, {
      repository,
      trust,
      decisions,
      keys,
      runIsActive,
      publicUrl,
      assets,
      logger,
      metrics,
      health: healthOf({ postgres: postgresReady(pool), ...consumerChecks(runtime, consumption, options.redis) }),
    });
    teardown.add(() => api.close());
    const url = await api.listen({ host: options.host, port: options.port });
    listening = url;
    return { url, joined: consumption.joined, sweep: () => sweeper.sweep(), stop: (stopOptions) => teardown.close(stopOptions) };
  });
}

/**
 * Whether a run's requests still stand: a run stopped or expired withdraws them; one whose record is
 * not there is not judged here (the request still expires on its own, and the executor proves the approval).
 */
function activeRuns(runs: RunRegistry): (runId: string) => Promise<boolean> {
  return async (runId) => {
    const run = await runs.get(runId);
    return run === undefined || isActive(run);
  };
}

/** Refuses a start with no way to know approvers, and says loudly that demo tokens are loaded. */
function checkApprovers(options: ApprovalServiceOptions, logger: Logger): void {
  if (options.identity === undefined && options.approvers === undefined) {
    throw new Error(
      'the approval service needs an identity provider (GATEHOUSE_OIDC_ISSUER) or, for demos, approver tokens (GATEHOUSE_DEMO_APPROVERS)',
    );
  }
  for (const approver of options.approvers?.list() ?? []) {
    if (approver.demo)
      logger.warn(
        { approver: approver.identity },
        'DEMO APPROVER TOKEN LOADED: its token is published; anyone holding it approves as this person. Never in production.',
      );
  }
}

/** The webhook outbox and its dispatcher, when any endpoint is configured. */
function startWebhooks(
  options: ApprovalServiceOptions,
  pool: pg.Pool,
  publicUrl: () => string,
  logger: Logger,
  metrics: GatehouseMetrics,
  teardown: Teardown,
): WebhookOutbox | undefined {
  const webhooks =
    options.webhooks === undefined || options.webhooks.endpoints.length === 0
      ? undefined
      : new WebhookOutbox(pool, tablesIn(options.schema), options.webhooks, publicUrl, logger.child({ component: 'webhooks' }), metrics);
  if (webhooks !== undefined) {
    const dispatcher = startWebhookDispatcher(webhooks, options.sweepMs, logger.child({ component: 'webhooks' }));
    teardown.add(() => dispatcher.stop());
  }
  return webhooks;
}

/** A pool on the service's database, its schema migrated; the pool ends at teardown. */
async function openDatabase(options: ApprovalServiceOptions, logger: Logger, teardown: Teardown): Promise<pg.Pool> {
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });
  pool.on('error', (error) => logger.error({ err: error }, 'idle PostgreSQL client failed'));
  teardown.add(() => pool.end());
  const applied = await migrate(pool, options.schema);
  logger.info({ schema: options.schema, migrations_applied: applied }, 'database ready');
  return pool;
}

interface DecisionParts {
  readonly repository: RequestRepository;
  /** This service's signer, and the keys it trusts: for sessions, seals and stored requests. */
  readonly trust: { readonly signer: EventSigner; readonly keys: KeyRing };
  readonly decisions: DecisionPublisher;
  readonly keys: Keyspace;
  readonly runIsActive: (runId: string) => Promise<boolean>;
  readonly publicUrl: () => string;
  readonly assets: ConsoleAssets;
  readonly logger: Logger;
  readonly metrics: GatehouseMetrics;
  readonly health: Health;
}

/** The API and console where people decide requests, with sign-in when an identity provider is configured. */
function serveDecisions(options: ApprovalServiceOptions, parts: DecisionParts): ReturnType<typeof buildApi> {
  const { repository, decisions, keys, runIsActive, publicUrl, assets, logger, metrics } = parts;
  const sessions = new SessionStore(options.redis, keys, parts.trust, options.sessionTtlMs);
  const auth = new ApproverAuth(sessions, logger.child({ component: 'auth' }), options.identity, options.approvers);
  const decider = new ApprovalDecisions(
    repository,
    decisions,
    options.approvalValidityMs,
    logger.child({ component: 'decisions' }),
    metrics,
    runIsActive,
  );
  const api = buildApi({
    repository,
    decider,
    auth,
    sessionCookie: () => sessionCookie(publicUrl()).name,
    assets,
    logger,
    metrics,
    health: parts.health,
  });
  if (options.identity !== undefined)
    registerSignIn(api, {
      identity: options.identity,
      auth,
      sessions,
      logger: logger.child({ component: 'sign-in' }),
      metrics,
      publicUrl,
    });
  return api;
}
