import { randomUUID } from 'node:crypto';
import { createClient } from '@gatehouse/client';
import type { GatehouseClient } from '@gatehouse/client';
import { Catalog } from '@gatehouse/contracts';
import type { ToolImplementation } from '@gatehouse/contracts';
import { DeadLetters, EventPublisher, EventSerde, KafkaAdmin, provisionTopics, topicNames } from '@gatehouse/events';
import type { EventsConfig, ExecutionOrder, Topics } from '@gatehouse/events';
import { startExecutor } from '@gatehouse/executor';
import type { RunningExecutor, SlotLimits } from '@gatehouse/executor';
import { loadRoles, PolicyTable } from '@gatehouse/governance';
import { startPolicyService } from '@gatehouse/policy';
import { REFERENCE_POLICY_TABLE_FILE, REFERENCE_ROLES_FILE } from './reference-pack.js';
import type { Roles, RunningPolicyService } from '@gatehouse/policy';
import { customerSupportCatalog, customerSupportImplementations } from '@gatehouse/example-customer-support';
import { createRedis, Keyspace, redisUrlFromEnv } from '@gatehouse/state';
import type { ReplicaBarrier } from '@gatehouse/state';
import type { PersonRef, Redis, Run } from '@gatehouse/state';
import { startApprovalService } from '@gatehouse/approval';
import type { RunningApprovalService } from '@gatehouse/approval';
import { startTestService } from '../customers-harness.js';
import { DATABASE_URL, testApprovers } from './approval.js';
import type { TestService } from '../customers-harness.js';
import { testKafka } from './kafkajs.js';
import type { TestKafka } from './kafkajs.js';
import { testPolicySettings } from './policy-settings.js';
import { config, logger, uniquePrefix } from './stack.js';
import {
  TEST_ASSERTION_SETTINGS,
  TEST_KEY_RING,
  TEST_SEALER,
  TEST_SEALING_KEYS,
  TEST_SIGNING_KEYS,
  TEST_UNSEALING_KEYS,
} from './signing.js';
import { operatorIdentity, orchestratorIdentity, stackExchange, stackIdentity, subjectTokenVerifier } from './identity.js';

export const CONTROL_TOKEN = 'test-control-token-0123456789';

export interface GatehouseOptions {
  readonly executors?: number;
  readonly policies?: number;
  readonly faults?: boolean;
  readonly exportStepMs?: number;
  /** Serve the customers service on a thread of its own (`startTestService`'s `thread`). */
  readonly customersThread?: boolean;
  readonly catalog?: Catalog;
  readonly implementations?: readonly ToolImplementation[];
  readonly partitions?: number;
  readonly leaseMs?: number;
  readonly roles?: Roles;
  /** The policy table; defaults to the reference pack's. */
  readonly table?: PolicyTable;
  readonly grantValidityMs?: number;
  readonly limits?: SlotLimits;
  /** Start the approval service too (its own PostgreSQL schema, the test approvers of support/approval.ts). */
  readonly approval?: boolean | { readonly validityMs?: number };
  /**
   * The stack's identity provider: the control API takes the orchestrator's client-credentials
   * tokens (beside the test control token), and the approval service signs people in.
   */
  readonly identity?: boolean;
  /**
   * Operators at the stack's IdP: the control API's operator routes take people's tokens (the
   * reference approver policy's ops-admins, in their tenants). On with `identity` too.
   */
  readonly operators?: boolean;
  /** Token exchange at the stack's IdP: executors exchange, the control API takes people's tokens. */
  readonly exchange?: boolean;
  /** The Kafka cluster and topic settings, in place of the environment's (a fault test's own cluster). */
  readonly events?: EventsConfig;
  /** The replicas the in-process services' durable Redis records wait for (GATEHOUSE_REDIS_WAIT_REPLICAS). */
  readonly redisBarrier?: ReplicaBarrier;
}

/** A whole Gatehouse in this process over the real stack: its own topics, Redis prefix and customers schema. */
export interface Gatehouse {
  readonly label: string;
  /** Prefix of every topic of this Gatehouse (GATEHOUSE_TOPIC_PREFIX for services run as processes). */
  readonly topicPrefix: string;
  /** Prefix of every Redis key of this Gatehouse (GATEHOUSE_REDIS_PREFIX). */
  readonly redisPrefix: string;
  readonly topics: Topics;
  /** The Kafka cluster and topic settings this Gatehouse runs on (its processes get the same). */
  readonly events: EventsConfig;
  readonly kafka: TestKafka;
  readonly serde: EventSerde;
  readonly redis: Redis;
  readonly keys: Keyspace;
  readonly customers: TestService;
  readonly policies: RunningPolicyService[];
  readonly executors: RunningExecutor[];
  readonly client: GatehouseClient;
  readonly catalog: Catalog;
  /** The approval service, when started (`approval` option). */
  readonly approval: RunningApprovalService | undefined;
  createRun(
    role: string,
    overrides?: {
      tenant?: string;
      capabilities?: string[];
      ttlMs?: number;
      environment?: string;
      principal?: string;
      /** The person the run acts for, as their IdP names them (any issuer: this Gatehouse checks none). */
      onBehalfOf?: PersonRef;
    },
  ): Promise<RegisteredRun>;
  /** Another executor of this Gatehouse; with `pack`, one that hosts that pack instead (a rolling upgrade, a patched pack). */
  startExecutor(id?: string, pack?: readonly ToolImplementation[]): Promise<RunningExecutor>;
  /** Another policy instance of this Gatehouse; with `catalog`, one that serves that catalog instead (its roles and table stay). */
  startPolicy(id?: string, catalog?: Catalog): Promise<RunningPolicyService>;
  /** Records every ExecutionOrder published, to prove what was (not) routed. */
  watchOrders(): Promise<{ orders: ExecutionOrder[]; stop(): Promise<void> }>;
  stop(): Promise<void>;
}

/** A run as registration answers it: the record, and the run's key (shown once; `client` holds it). */
export type RegisteredRun = Run & { readonly run_key: string };

export async function startGatehouse(label: string, options: GatehouseOptions = {}): Promise<Gatehouse> {
  const customers = await startTestService({
    faults: options.faults ?? false,
    ...(options.exportStepMs === undefined ? {} : { exportStepMs: options.exportStepMs }),
    ...(options.customersThread === undefined ? {} : { thread: options.customersThread }),
  });
  process.env['CUSTOMERS_URL'] = customers.url;
  const eventSettings = options.events ?? config;
  const topicPrefix = uniquePrefix(label);
  const topics = topicNames(topicPrefix);
  const redisPrefix = `t-${label}-${randomUUID().slice(0, 8)}:`;
  const redis = createRedis(redisUrlFromEnv(), `test-${label}`, undefined, options.redisBarrier);
  const kafka = testKafka(eventSettings, `test-${label}`);
  const admin = await KafkaAdmin.connect(kafka);
  await provisionTopics(admin, topics, { ...eventSettings.topicSettings, partitions: options.partitions ?? 3 });
  await admin.close();
  const serde = new EventSerde({ registryUrl: eventSettings.registryUrl, topics });
  await serde.registerAll();
  const catalog = options.catalog ?? customerSupportCatalog();
  const implementations = options.implementations ?? customerSupportImplementations;
  const roles = options.roles ?? loadRoles(REFERENCE_ROLES_FILE, catalog);
  const events = { ...eventSettings, topicSettings: { ...eventSettings.topicSettings, partitions: options.partitions ?? 3 } };

  const callerIdentity = options.identity === true ? await orchestratorIdentity() : undefined;
  const operators = options.operators === true || options.identity === true ? await operatorIdentity() : undefined;
  // People's tokens handed to runs are kept sealed to the test executors' keys, as a deployment's.
  const subjectTokens = options.exchange === true ? { verifier: await subjectTokenVerifier(), sealer: TEST_SEALER } : undefined;
  const policies: RunningPolicyService[] = [];
  const addPolicy = async (id = `policy-${policies.length}`, served: Catalog = catalog): Promise<RunningPolicyService> => {
    const policy = await startPolicyService({
      events,
      topics,
      redis,
      redisPrefix,
      catalog: served,
      roles,
      table: options.table ?? PolicyTable.load(REFERENCE_POLICY_TABLE_FILE, catalog.tools()),
      ...(options.grantValidityMs === undefined ? {} : { grantValidityMs: options.grantValidityMs }),
      ...(callerIdentity === undefined ? {} : { callerIdentity }),
      ...(operators === undefined ? {} : { operatorIdentity: operators }),
      ...(subjectTokens === undefined ? {} : { subjectTokens }),
      ...testPolicySettings(label, id, CONTROL_TOKEN),
    });
    policies.push(policy);
    return policy;
  };
  for (let i = 0; i < (options.policies ?? 1); i += 1) await addPolicy();
  const executors: RunningExecutor[] = [];
  const addExecutor = async (id = `exec-${executors.length}`, pack?: readonly ToolImplementation[]): Promise<RunningExecutor> => {
    const executor = await startExecutor({
      events,
      topics,
      redis,
      redisPrefix,
      catalog: pack === undefined ? catalog : Catalog.load(pack.map((tool) => tool.contract)),
      implementations: pack ?? implementations,
      trustedKeys: TEST_KEY_RING,
      signingKey: TEST_SIGNING_KEYS.executor,
      assertions: TEST_ASSERTION_SETTINGS,
      ...(options.exchange === true
        ? { exchange: { ...stackExchange, sealingKeys: TEST_SEALING_KEYS, unsealingKeys: TEST_UNSEALING_KEYS } }
        : {}),
      logger,
      executorId: `${label}-${id}`,
      groupId: `${label}-executor`,
      concurrency: 64,
      perTenantConcurrency: 8,
      leaseMs: options.leaseMs ?? 3_000,
      proposalTtlMs: 600_000,
      ...(options.limits === undefined ? {} : { limits: options.limits }),
      // /metrics, /healthz and /readyz on a free port: `executor.url`.
      http: { host: '127.0.0.1', port: 0 },
    });
    executors.push(executor);
    return executor;
  };
  for (let i = 0; i < (options.executors ?? 1); i += 1) await addExecutor();
  let approval: RunningApprovalService | undefined;
  if (options.approval !== undefined && options.approval !== false) {
    const validityMs = typeof options.approval === 'object' ? options.approval.validityMs : undefined;
    approval = await startApprovalService({
      events,
      topics,
      databaseUrl: DATABASE_URL,
      schema: `a_${randomUUID().replace(/-/g, '').slice(0, 16)}`,
      redis,
      redisPrefix,
      approvers: testApprovers(),
      ...(options.identity === true ? { identity: await stackIdentity() } : {}),
      signingKey: TEST_SIGNING_KEYS.approval,
      trustedKeys: TEST_KEY_RING,
      catalog,
      logger,
      host: '127.0.0.1',
      port: 0,
      approvalValidityMs: validityMs ?? 600_000,
      sweepMs: 100,
      outboxRetryMs: 1_000,
      groupId: `${label}-approval`,
      instanceId: `${label}-approval`,
    });
    await approval.joined;
  }
  await Promise.all([...policies.map((p) => p.joined), ...executors.map((e) => e.joined)]);
  const controlUrl = policies[0]?.url ?? '';
  const client = await createClient({
    config: eventSettings,
    topics,
    controlUrl,
    clientId: `test-${label}`,
    logger,
    defaultTimeoutMs: 30_000,
    resultKeys: TEST_KEY_RING,
  });

  return {
    label,
    events,
    topicPrefix,
    redisPrefix,
    topics,
    kafka,
    serde,
    redis,
    keys: new Keyspace(redisPrefix),
    customers,
    policies,
    executors,
    client,
    catalog,
    approval,
    startExecutor: addExecutor,
    startPolicy: addPolicy,
    async createRun(role, overrides = {}) {
      const response = await fetch(`${controlUrl}/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${CONTROL_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          tenant: overrides.tenant ?? 'acme',
          principal: overrides.principal ?? 'agent:support-bot',
          role,
          environment: overrides.environment ?? 'sandbox',
          ttl_ms: overrides.ttlMs ?? 600_000,
          ...(overrides.capabilities === undefined ? {} : { capabilities: overrides.capabilities }),
          ...(overrides.onBehalfOf === undefined ? {} : { on_behalf_of: overrides.onBehalfOf }),
        }),
      });
      if (response.status !== 201) throw new Error(`run creation answered ${response.status}: ${await response.text()}`);
      const run = (await response.json()) as RegisteredRun;
      // The harness's client proves this run's commands with its key, as the agent runtime given it would.
      client.holdRunKey(run.run_id, run.run_key);
      return run;
    },
    async watchOrders() {
      const orders: ExecutionOrder[] = [];
      const publisher = await EventPublisher.connect(kafka, serde);
      const { startEventConsumer } = await import('@gatehouse/events');
      const running = await startEventConsumer({
        kafka,
        serde,
        role: 'execute',
        groupId: `${label}-watch-${randomUUID()}`,
        fromBeginning: true,
        deadLetters: new DeadLetters(publisher),
        logger,
        handle: (order) => {
          orders.push(order);
          return Promise.resolve();
        },
      });
      await running.joined;
      return {
        orders,
        stop: async () => {
          await running.stop();
          await publisher.disconnect();
        },
      };
    },
    async stop() {
      await client.close();
      await Promise.all(executors.map((e) => e.stop({ drainTimeoutMs: 2_000 })));
      await Promise.all(policies.map((p) => p.stop()));
      await approval?.stop();
      await redis.quit();
      await customers.close();
    },
  };
}
