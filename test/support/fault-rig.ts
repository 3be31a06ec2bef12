import type { EventsConfig, OperatorHandoff, ToolResult } from '@gatehouse/events';
import { customerSupportCatalog } from '@gatehouse/example-customer-support';
import { recordLedgerSteps } from '@gatehouse/state';
import type { ReplicaBarrier, Run } from '@gatehouse/state';
import { ExecutorFleet, seedCustomers } from './fleet.js';
import { startGatehouse } from './gatehouse.js';
import type { Gatehouse } from './gatehouse.js';
import { PolicyFleet } from './policy-fleet.js';
import { ledgerHistoryFile } from './ledger-history.js';
import { freePort } from './processes.js';
import { sandboxAllowsWrites } from './test-policy.js';
import { openEventLedger } from './topic-ledger.js';
import type { TopicLedger } from './topic-ledger.js';
import type { Customer } from './mixed-load.js';

export const RIG = {
  partitions: 6,
  tenants: 20,
  customersPerTenant: 50,
  leaseMs: 2_000,
  executorSessionTimeoutMs: 6_000,
} as const;

export interface FaultRigOptions {
  /** Run the policy service as this many OS processes instead of one in-process instance. */
  readonly policyProcesses?: number;
  /** The Redis every part of the rig uses (its REDIS_URL while the rig runs), in place of the environment's. */
  readonly redisUrl?: string;
  /** The Kafka cluster and topic settings of the rig, in place of the environment's. */
  readonly events?: EventsConfig;
  /** The replicas every service's durable Redis records wait for (GATEHOUSE_REDIS_WAIT_REPLICAS; none when unset). */
  readonly redisBarrier?: ReplicaBarrier;
  /** Customers seeded per tenant (RIG.customersPerTenant when unset); each takes one write of the load. */
  readonly customersPerTenant?: number;
  /** How each of the two executor processes starts, once the rig's services are up. */
  readonly executors?: (g: Gatehouse) => Promise<readonly [ExecutorSetup, ExecutorSetup]>;
}

/** What one executor process of the rig gets besides the rig's environment, and what it runs inside. */
interface ExecutorSetup {
  /** A skewed clock, say, or the addresses it reaches the stack at. */
  readonly env?: Readonly<Record<string, string>>;
  /** A command it runs under (a network namespace's `ip netns exec <name>`). */
  readonly via?: readonly string[];
}

/**
 * The stack a fault test runs a mixed load through: two executor processes, the policy service
 * (in-process, or as processes), sandbox writes allowed by policy, seeded customers, one run per
 * tenant, and ledgers of the results and operator topics from their beginning.
 */
export interface FaultRig {
  readonly g: Gatehouse;
  readonly executors: ExecutorFleet;
  /** The ops addresses (`/metrics`) of the two executors the rig started, as it started them. */
  readonly executorOps: readonly string[];
  /** Present when the policy runs as processes. */
  readonly policies: PolicyFleet | undefined;
  readonly tenants: readonly string[];
  readonly customers: readonly Customer[];
  /** The run each tenant's new calls use (replaceable). */
  readonly runs: Map<string, Run>;
  /** Every run id ever handed out, for the slot check. */
  readonly runIds: Set<string>;
  readonly results: TopicLedger<ToolResult>;
  readonly handoffs: TopicLedger<OperatorHandoff>;
  /**
   * The file every step of the claim ledger is appended to, by this process (an in-process policy
   * service) and by every executor and policy process (GATEHOUSE_LEDGER_HISTORY): checked against
   * the protocol model once the load is done (`checkLedgerHistory`).
   */
  readonly ledgerHistory: string;
  /** Registers fresh runs for every tenant (through a live policy control API). */
  renewRuns(): Promise<void>;
  stop(): Promise<void>;
}

export async function startFaultRig(label: string, options: FaultRigOptions = {}): Promise<FaultRig> {
  // The in-process services and the executor processes all read REDIS_URL when they start.
  const environmentRedisUrl = process.env['REDIS_URL'];
  const restoreRedisUrl = (): void => {
    if (environmentRedisUrl === undefined) delete process.env['REDIS_URL'];
    else process.env['REDIS_URL'] = environmentRedisUrl;
  };
  if (options.redisUrl === undefined) return startRig(label, options);
  process.env['REDIS_URL'] = options.redisUrl;
  try {
    const rig = await startRig(label, options);
    return {
      ...rig,
      async stop() {
        try {
          await rig.stop();
        } finally {
          restoreRedisUrl();
        }
      },
    };
  } catch (error) {
    restoreRedisUrl();
    throw error;
  }
}

async function startRig(label: string, options: FaultRigOptions): Promise<FaultRig> {
  const ledgerHistory = ledgerHistoryFile(label);
  const stopRecording = recordLedgerSteps(ledgerHistory, 'test process');
  try {
    return await startRecordedRig(label, options, ledgerHistory, stopRecording);
  } catch (error) {
    stopRecording();
    throw error;
  }
}

async function startRecordedRig(
  label: string,
  options: FaultRigOptions,
  ledgerHistory: string,
  stopRecording: () => void,
): Promise<FaultRig> {
  const catalog = customerSupportCatalog();
  const policyProcesses = options.policyProcesses ?? 0;
  const g = await startGatehouse(label, {
    executors: 0,
    policies: policyProcesses > 0 ? 0 : 1,
    partitions: RIG.partitions,
    catalog,
    table: sandboxAllowsWrites(catalog),
    leaseMs: RIG.leaseMs,
    // The load keeps this process busy; the system of record answers on its own event loop.
    customersThread: true,
    ...(options.events === undefined ? {} : { events: options.events }),
    ...(options.redisBarrier === undefined ? {} : { redisBarrier: options.redisBarrier }),
  });
  const executors = new ExecutorFleet(
    g,
    {
      GATEHOUSE_TENANT_SLOTS: '8',
      GATEHOUSE_RUN_SLOTS: '8',
      EXECUTOR_LEASE_MS: String(RIG.leaseMs),
      EXECUTOR_SESSION_TIMEOUT_MS: String(RIG.executorSessionTimeoutMs),
      GATEHOUSE_LEDGER_HISTORY: ledgerHistory,
      ...(options.redisBarrier === undefined
        ? {}
        : {
            GATEHOUSE_REDIS_WAIT_REPLICAS: String(options.redisBarrier.replicas),
            GATEHOUSE_REDIS_WAIT_TIMEOUT_MS: String(options.redisBarrier.timeoutMs),
          }),
    },
    RIG.partitions,
  );
  await executors.prepare();
  const setups = (await options.executors?.(g)) ?? [{}, {}];
  const executorOps: string[] = [];
  for (const [i, setup] of setups.entries()) {
    // An ops port the test knows (unless the setup names its own), so it can read the executor's metrics.
    const env = { EXECUTOR_HOST: '127.0.0.1', EXECUTOR_PORT: String(await freePort()), ...setup.env };
    executors.spawn(`${label}-exec-${i === 0 ? 'a' : 'b'}`, env, setup.via);
    executorOps.push(`http://127.0.0.1:${env.EXECUTOR_PORT}`);
  }
  let policies: PolicyFleet | undefined;
  if (policyProcesses > 0) {
    policies = new PolicyFleet(g, RIG.partitions, { GATEHOUSE_LEDGER_HISTORY: ledgerHistory });
    await policies.prepare();
    for (let i = 0; i < policyProcesses; i += 1) await policies.spawn(`${label}-policy-${String.fromCharCode(97 + i)}`);
    await policies.awaitMembers(policyProcesses);
  }
  await executors.awaitMembers(2);

  const tenants = Array.from({ length: RIG.tenants }, (_, i) => `${label}-t${i}`);
  const customers = await seedCustomers(g, tenants, options.customersPerTenant ?? RIG.customersPerTenant);
  const runs = new Map<string, Run>();
  const runIds = new Set<string>();
  const renewRuns = async (): Promise<void> => {
    const fleet = policies;
    const live = fleet?.processes.find((p) => fleet.isLive(p));
    for (const tenant of tenants) {
      const run =
        fleet === undefined || live === undefined ? await g.createRun('support-agent', { tenant }) : await fleet.createRun(live, tenant);
      g.client.holdRunKey(run.run_id, run.run_key);
      runs.set(tenant, run);
      runIds.add(run.run_id);
    }
  };
  await renewRuns();
  const results = await openEventLedger(g, 'results');
  const handoffs = await openEventLedger(g, 'operator');
  return {
    g,
    executors,
    executorOps,
    policies,
    tenants,
    customers,
    runs,
    runIds,
    results,
    handoffs,
    ledgerHistory,
    renewRuns,
    async stop() {
      // Each part stops even if another cannot (a consumer that crashed during an outage).
      const outcomes = await Promise.allSettled([results.stop(), handoffs.stop(), executors.stop(), policies?.stop()]);
      outcomes.push(...(await Promise.allSettled([g.stop()])));
      stopRecording();
      const failed = outcomes.flatMap((o) =>
        o.status === 'rejected' ? [o.reason instanceof Error ? o.reason.message : String(o.reason)] : [],
      );
      if (failed.length > 0) throw new Error(`teardown: ${failed.join('; ')}`);
    },
  };
}

/** Every slot scope the load can have taken: each tenant's and each run's. */
export function slotScopes(rig: FaultRig): string[] {
  return [...rig.tenants.map((t) => `tenant:${t}`), ...[...rig.runIds].map((r) => `run:${r}`)];
}
