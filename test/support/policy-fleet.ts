import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REFERENCE_POLICY_TABLE_FILE } from './reference-pack.js';
import type { Run } from '@gatehouse/state';
import type { Admin } from 'kafkajs';
import { stackEnvOf } from './fleet.js';
import { CONTROL_TOKEN } from './gatehouse.js';
import type { Gatehouse } from './gatehouse.js';
import { pollUntil } from './poll.js';
import { awaitGroup, freePort, spawnService } from './processes.js';
import type { ServiceProcess } from './processes.js';

/** The built entrypoint of the policy service (build before running tests). */
const POLICY_MAIN = fileURLToPath(new URL('../../services/policy/dist/main.js', import.meta.url));

/**
 * The reference policy table with sandbox address changes and emails allowed, as a file for policy
 * processes (GATEHOUSE_POLICY_TABLE_FILE): the document form of test-policy.ts's sandboxAllowsWrites.
 */
async function writeSandboxAllowTable(dir: string): Promise<string> {
  const document = JSON.parse(await readFile(REFERENCE_POLICY_TABLE_FILE, 'utf8')) as { rules: unknown[] };
  const path = join(dir, 'policy-table.json');
  const rule = {
    id: 'sandbox-writes-allow',
    description: 'Test only: sandbox address changes and emails run without approval.',
    match: { effect: 'write', environments: ['sandbox'], approvalRules: ['address-change', 'customer-email'] },
    decision: { kind: 'allow' },
  };
  await writeFile(path, JSON.stringify({ rules: [rule, ...document.rules] }, null, 2));
  return path;
}

/** Policy services as OS processes, members of one consumer group on the harness's commands topic. */
export class PolicyFleet {
  readonly processes: ServiceProcess[] = [];
  readonly urls = new Map<ServiceProcess, string>();
  private readonly admin: Admin;
  private dir = '';
  private tableFile = '';
  private readonly dead = new Set<ServiceProcess>();
  /** Processes that exited without being killed or stopped by this fleet. */
  readonly crashes: string[] = [];

  constructor(
    private readonly g: Gatehouse,
    private readonly partitions: number,
    /** Added to every process's environment (a ledger history to write, say). */
    private readonly env: Readonly<Record<string, string>> = {},
  ) {
    this.admin = g.kafka.admin();
  }

  get groupId(): string {
    return `${this.g.label}-policy-procs`;
  }

  /** Writes the policy table and commits the start of gatehouse.commands for the group, so no early command is skipped. */
  async prepare(): Promise<void> {
    this.dir = await mkdtemp(join(tmpdir(), `${this.g.label}-policy-`));
    this.tableFile = await writeSandboxAllowTable(this.dir);
    await this.admin.connect();
    await this.admin.setOffsets({
      groupId: this.groupId,
      topic: this.g.topics.commands,
      partitions: Array.from({ length: this.partitions }, (_, partition) => ({ partition, offset: '0' })),
    });
  }

  async spawn(id: string): Promise<ServiceProcess> {
    const port = await freePort();
    const process = spawnService(id, POLICY_MAIN, {
      GATEHOUSE_CONTROL_TOKEN: CONTROL_TOKEN,
      ...stackEnvOf(this.g, this.partitions),
      GATEHOUSE_POLICY_TABLE_FILE: this.tableFile,
      POLICY_GROUP_ID: this.groupId,
      POLICY_HOST: '127.0.0.1',
      POLICY_PORT: String(port),
      LOG_LEVEL: 'warn',
      ...this.env,
    });
    this.processes.push(process);
    this.urls.set(process, `http://127.0.0.1:${port}`);
    void process.exited.then((exit) => {
      if (!this.dead.has(process)) this.crashes.push(`${id} exited (${exit.code ?? exit.signal}): ${process.output().slice(-500)}`);
    });
    return process;
  }

  /** Waits until `members` policy processes hold every partition of the commands topic between them. */
  async awaitMembers(members: number, timeoutMs = 60_000): Promise<void> {
    const died = Promise.race(
      this.processes
        .filter((p) => !this.dead.has(p))
        .map((p) => p.exited.then((e) => `${p.name} exited (${e.code ?? e.signal}): ${p.output().slice(-500)}`)),
    );
    await awaitGroup(
      this.admin,
      this.groupId,
      this.g.topics.commands,
      (view) =>
        view.state === 'Stable' &&
        view.members.length === members &&
        new Set(view.members.flatMap((m) => m.partitions)).size === this.partitions,
      timeoutMs,
      died,
    );
    // The control API listens just after the consumer starts; wait until every live one answers.
    const live = this.processes.filter((p) => this.urls.has(p) && !this.dead.has(p));
    await pollUntil(
      async () => {
        const answers = await Promise.all(
          live.map((p) =>
            fetch(`${this.urls.get(p) ?? ''}/healthz`).then(
              (r) => r.ok,
              () => false,
            ),
          ),
        );
        return answers.every(Boolean) ? true : undefined;
      },
      timeoutMs,
      'the control APIs of the policy processes',
      50,
    );
  }

  /** Not killed by this fleet (it may still have died on its own: see `exited`). */
  isLive(process: ServiceProcess): boolean {
    return !this.dead.has(process);
  }

  /** Kills a policy process with SIGKILL (no shutdown of any kind) and waits for its exit. */
  async kill(process: ServiceProcess): Promise<void> {
    this.dead.add(process);
    const exit = await process.stop('SIGKILL');
    if (exit.signal !== 'SIGKILL') throw new Error(`${process.name} exited with ${exit.code ?? exit.signal} before the kill`);
  }

  /** Registers a run through the control API of a live policy process, as trusted code does. */
  async createRun(process: ServiceProcess, tenant: string, role = 'support-agent'): Promise<Run & { readonly run_key: string }> {
    const response = await fetch(`${this.urls.get(process) ?? ''}/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CONTROL_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tenant, principal: 'agent:support-bot', role, environment: 'sandbox', ttl_ms: 600_000 }),
    });
    if (response.status !== 201) throw new Error(`run creation answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as Run & { readonly run_key: string };
  }

  async stop(): Promise<void> {
    for (const p of this.processes) this.dead.add(p);
    await Promise.all(this.processes.map((p) => p.stop('SIGTERM', 15_000)));
    await this.admin.disconnect();
    if (this.dir !== '') await rm(this.dir, { recursive: true, force: true });
  }
}
