import type { Admin } from 'kafkajs';
import { redisUrlFromEnv } from '@gatehouse/state';
import type { Gatehouse } from './gatehouse.js';
import { awaitGroup, EXECUTOR_MAIN, spawnService } from './processes.js';
import type { ServiceProcess } from './processes.js';

/** Where a service process of the harness finds the stack, its topics and its keys. */
export function stackEnvOf(g: Gatehouse, partitions: number): Record<string, string> {
  return {
    KAFKA_BROKERS: g.events.brokers.join(','),
    SCHEMA_REGISTRY_URL: g.events.registryUrl,
    GATEHOUSE_TOPIC_REPLICATION: String(g.events.topicSettings.replicationFactor),
    REDIS_URL: redisUrlFromEnv(),
    GATEHOUSE_TOPIC_PREFIX: g.topicPrefix,
    GATEHOUSE_TOPIC_PARTITIONS: String(partitions),
    GATEHOUSE_REDIS_PREFIX: g.redisPrefix,
  };
}

/** Executors as OS processes, members of the harness's executor group. */
export class ExecutorFleet {
  readonly processes: ServiceProcess[] = [];
  private readonly admin: Admin;

  constructor(
    private readonly g: Gatehouse,
    private readonly env: Readonly<Record<string, string>>,
    private readonly partitions: number,
  ) {
    this.admin = g.kafka.admin();
  }

  get groupId(): string {
    return `${this.g.label}-executor`;
  }

  /** Commits the start of gatehouse.execute for the group, so no order published before the first join is skipped. */
  async prepare(): Promise<void> {
    await this.admin.connect();
    await this.admin.setOffsets({
      groupId: this.groupId,
      topic: this.g.topics.execute,
      partitions: Array.from({ length: this.partitions }, (_, partition) => ({ partition, offset: '0' })),
    });
  }

  /**
   * Starts an executor process; `env` is added to the fleet's own (a skewed clock, say), and `via`
   * runs it inside something (a network namespace).
   */
  spawn(id: string, env: Readonly<Record<string, string>> = {}, via: readonly string[] = []): ServiceProcess {
    const process = spawnService(
      id,
      EXECUTOR_MAIN,
      {
        ...stackEnvOf(this.g, this.partitions),
        EXECUTOR_GROUP_ID: this.groupId,
        EXECUTOR_ID: id,
        CUSTOMERS_URL: this.g.customers.url,
        EXECUTOR_PORT: '0',
        LOG_LEVEL: 'warn',
        ...this.env,
        ...env,
      },
      via,
    );
    this.processes.push(process);
    return process;
  }

  /** Waits until `members` executors hold every partition between them. */
  async awaitMembers(members: number, timeoutMs = 60_000): Promise<void> {
    const died = Promise.race(
      this.processes.map((p) => p.exited.then((e) => `${p.name} exited (${e.code ?? e.signal}): ${p.output().slice(-500)}`)),
    );
    await awaitGroup(
      this.admin,
      this.groupId,
      this.g.topics.execute,
      (view) =>
        view.state === 'Stable' &&
        view.members.length === members &&
        new Set(view.members.flatMap((m) => m.partitions)).size === this.partitions,
      timeoutMs,
      died,
    );
  }

  async stop(): Promise<void> {
    await Promise.all(this.processes.map((p) => p.stop('SIGTERM', 15_000)));
    await this.admin.disconnect();
  }
}

/** Adds `perTenant` customers (version 1) to each of `tenants` in the harness's customers schema. */
export async function seedCustomers(
  g: Gatehouse,
  tenants: readonly string[],
  perTenant: number,
): Promise<{ tenant: string; id: string }[]> {
  const rows: { tenant: string; id: string }[] = [];
  let n = 0;
  for (const tenant of tenants) {
    for (let i = 0; i < perTenant; i += 1) rows.push({ tenant, id: `C-${900_000 + n++}` });
  }
  await g.customers.db.query(
    `insert into ${g.customers.t.customers}
       (id, tenant, name, email, phone, line1, city, country, postal_code, version, updated_at, internal_notes, credit_score)
     select c.id, c.tenant, 'Load Test ' || c.id, lower(c.id) || '@example.com', '+44 20 0000 0000',
            '1 Start Street', 'Leeds', 'GB', null, 1, now(), 'internal', 700
       from jsonb_to_recordset($1::jsonb) as c(id text, tenant text)`,
    [JSON.stringify(rows)],
  );
  return rows;
}
