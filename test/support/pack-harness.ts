// A whole Gatehouse — policy service, approval service, executor — hosting any tool pack in this
// process over the real stack, the way the services' main.ts host the configured pack: the pack's
// configuration read once, `setup` and `tools` run once, the catalog, roles and policy table checked
// by `validatePack`, the approvers read from the pack's own file. No service knows the pack's domain.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Approvers, startApprovalService } from '@gatehouse/approval';
import type { RunningApprovalService } from '@gatehouse/approval';
import { createClient } from '@gatehouse/client';
import type { CallResult, GatehouseClient, PendingNotice } from '@gatehouse/client';
import type { EventSerde, Topics } from '@gatehouse/events';
import { startExecutor } from '@gatehouse/executor';
import type { RunningExecutor } from '@gatehouse/executor';
import { startPolicyService } from '@gatehouse/policy';
import type { RunningPolicyService } from '@gatehouse/policy';
import { readPackConfig, toolsOf, validatePack } from '@gatehouse/sdk';
import type { ConfigSpec, Env, ToolPack, ValidatedPack } from '@gatehouse/sdk';
import { createRedis, Keyspace, redisUrlFromEnv } from '@gatehouse/state';
import type { Redis, Run } from '@gatehouse/state';
import { DATABASE_URL } from './approval.js';
import { testPolicySettings } from './policy-settings.js';
import { pollUntil } from './poll.js';
import { config, eventually, freshTopics, logger } from './stack.js';
import { TEST_ASSERTION_SETTINGS, TEST_KEY_RING, TEST_SIGNING_KEYS } from './signing.js';
import type { KafkaConnection } from '@gatehouse/events';

const CONTROL_TOKEN = `test-control-${randomUUID()}`;

export interface PackGatehouseOptions {
  /** The pack's environment, as `readPackConfig` reads it (never process.env). */
  readonly env: Env;
  /** The approvers; default the pack's own approvers file. */
  readonly approvers?: Approvers;
  readonly partitions?: number;
}

interface Reply<T = Record<string, unknown>> {
  readonly status: number;
  readonly body: T;
}

/** A commit waiting for a person: its pending notice, and the promise of its terminal result. */
interface PendingCommit {
  readonly pending: PendingNotice;
  readonly settled: Promise<CallResult>;
}

export interface PackGatehouse {
  readonly label: string;
  readonly topics: Topics;
  readonly kafka: KafkaConnection;
  readonly serde: EventSerde;
  readonly redis: Redis;
  readonly keys: Keyspace;
  /** The pack as the services host it: catalog, implementations, roles and policy table. */
  readonly hosted: ValidatedPack;
  readonly policy: RunningPolicyService;
  readonly approval: RunningApprovalService;
  readonly executor: RunningExecutor;
  readonly client: GatehouseClient;
  /** Registers a run through the control API, as trusted code does (never the agent). */
  createRun(
    role: string,
    overrides?: { tenant?: string; principal?: string; environment?: string; ttlMs?: number },
  ): Promise<Run & { readonly run_key: string }>;
  /** Calls a tool as `run` and resolves with its terminal result. */
  call(run: Run, tool: string, args: unknown): Promise<CallResult>;
  /** Sends a commit and resolves once the approval service holds its pending request. */
  commitPending(run: Run, tool: string, proposalId: string, token: string): Promise<PendingCommit>;
  /** Calls the approval service's HTTP API (`/api/…`) with an approver's bearer token. */
  approvals<T = Record<string, unknown>>(method: 'GET' | 'POST', path: string, token: string, body?: unknown): Promise<Reply<T>>;
  stop(): Promise<void>;
}

const readJson = (url: URL): unknown => JSON.parse(readFileSync(url, 'utf8'));

/** The pack set up once, as a service's main.ts would: configuration, setup, tools, then validatePack. */
async function hostPack<C extends ConfigSpec, D>(pack: ToolPack<C, D>, env: Env): Promise<ValidatedPack> {
  const deps = await pack.setup(readPackConfig(pack, env));
  return validatePack(pack, { tools: toolsOf(pack, deps), roles: readJson(pack.roles), policyTable: readJson(pack.policyTable) });
}

function packApprovers(pack: ToolPack, given: Approvers | undefined): Approvers {
  if (given !== undefined) return given;
  if (pack.approvers === undefined) throw new Error(`pack ${pack.name} ships no approvers file; pass approvers`);
  return Approvers.load(fileURLToPath(pack.approvers));
}

/** Starts policy, approval and executor for `pack`, each with its own topics, Redis prefix and approvals schema. */
export async function startPackGatehouse<C extends ConfigSpec, D>(
  label: string,
  pack: ToolPack<C, D>,
  options: PackGatehouseOptions,
): Promise<PackGatehouse> {
  const hosted = await hostPack(pack, options.env);
  const approvers = packApprovers(pack, options.approvers);
  const partitions = options.partitions ?? 3;
  const { kafka, topics, serde } = await freshTopics(label, partitions);
  const events = { ...config, topicSettings: { ...config.topicSettings, partitions } };
  const redisPrefix = `t-${label}-${randomUUID().slice(0, 8)}:`;
  const redis = createRedis(redisUrlFromEnv(), `test-${label}`);
  const approvalSchema = `t_apr_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const { catalog, implementations, roles, policyTable } = hosted;
  const stoppers: (() => Promise<void>)[] = [];
  let stopped: Promise<void> | undefined;
  /** Stops what was started, last first; once, however often it is called. */
  const stopAll = (): Promise<void> => {
    stopped ??= (async () => {
      for (const stop of [...stoppers].reverse()) await stop();
    })();
    return stopped;
  };
  stoppers.push(async () => {
    await redis.quit();
  });

  try {
    const policy = await startPolicyService({
      events,
      topics,
      redis,
      redisPrefix,
      catalog,
      roles,
      table: policyTable,
      ...testPolicySettings(label, `${label}-policy`, CONTROL_TOKEN),
    });
    stoppers.push(() => policy.stop());
    const executor = await startExecutor({
      events,
      topics,
      redis,
      redisPrefix,
      catalog,
      implementations,
      trustedKeys: TEST_KEY_RING,
      signingKey: TEST_SIGNING_KEYS.executor,
      assertions: TEST_ASSERTION_SETTINGS,
      logger,
      executorId: `${label}-exec`,
      groupId: `${label}-executor`,
      concurrency: 64,
      perTenantConcurrency: 8,
      leaseMs: 3_000,
      proposalTtlMs: 600_000,
    });
    stoppers.push(() => executor.stop({ drainTimeoutMs: 2_000 }));
    const approval = await startApprovalService({
      events,
      topics,
      databaseUrl: DATABASE_URL,
      schema: approvalSchema,
      redis,
      redisPrefix,
      approvers,
      signingKey: TEST_SIGNING_KEYS.approval,
      trustedKeys: TEST_KEY_RING,
      catalog,
      logger,
      host: '127.0.0.1',
      port: 0,
      approvalValidityMs: 600_000,
      sweepMs: 100,
      outboxRetryMs: 1_000,
      groupId: `${label}-approval`,
      instanceId: `${label}-approval`,
    });
    stoppers.push(async () => {
      await approval.stop();
      const db = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
      await db.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(approvalSchema)} CASCADE`);
      await db.end();
    });
    await Promise.all([policy.joined, executor.joined, approval.joined]);
    const client = await createClient({
      config,
      topics,
      controlUrl: policy.url,
      clientId: `test-${label}`,
      logger,
      defaultTimeoutMs: 30_000,
      resultKeys: TEST_KEY_RING,
    });
    stoppers.push(() => client.close());

    const harness: PackGatehouse = {
      label,
      topics,
      kafka,
      serde,
      redis,
      keys: new Keyspace(redisPrefix),
      hosted,
      policy,
      approval,
      executor,
      client,
      async createRun(role, overrides = {}) {
        const response = await fetch(`${policy.url}/runs`, {
          method: 'POST',
          headers: { authorization: `Bearer ${CONTROL_TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            tenant: overrides.tenant ?? 'acme',
            principal: overrides.principal ?? `agent:${label}-bot`,
            role,
            environment: overrides.environment ?? 'sandbox',
            ttl_ms: overrides.ttlMs ?? 600_000,
          }),
        });
        if (response.status !== 201) throw new Error(`run creation answered ${response.status}: ${await response.text()}`);
        const run = (await response.json()) as Run & { run_key: string };
        client.holdRunKey(run.run_id, run.run_key);
        return run;
      },
      call: (run, tool, args) => client.call(tool, args, { runId: run.run_id, tenant: run.tenant }),
      async commitPending(run, tool, proposalId, token) {
        let notice: PendingNotice | undefined;
        const settled = client.call(
          tool,
          { proposal_id: proposalId },
          {
            runId: run.run_id,
            tenant: run.tenant,
            timeoutMs: 60_000,
            onPending: (p) => (notice = p),
          },
        );
        const pending = await eventually(() => notice, 20_000, `pending_approval of ${proposalId}`);
        await pollUntil(
          async () => ((await harness.approvals('GET', `/api/approvals/${proposalId}`, token)).status === 200 ? true : undefined),
          20_000,
          `the approval service to hold ${proposalId}`,
          25,
        );
        return { pending, settled };
      },
      async approvals<T>(method: 'GET' | 'POST', path: string, token: string, body?: unknown): Promise<Reply<T>> {
        const response = await fetch(`${approval.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        const text = await response.text();
        return { status: response.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
      },
      stop: stopAll,
    };
    return harness;
  } catch (error) {
    await stopAll();
    throw error;
  }
}
