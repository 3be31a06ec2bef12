import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { redisUrlFromEnv } from '@gatehouse/state';
import { AssignerProtocol } from 'kafkajs';
import type { Kafka } from 'kafkajs';
import { BENCH_SIGNING, EXECUTOR_SETTINGS } from './gatehouse.js';
import { config, PARTITIONS } from './stack.js';

const ENTRYPOINT = fileURLToPath(new URL('./executor-process.js', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface FleetOptions {
  readonly topicPrefix: string;
  readonly redisPrefix: string;
  readonly groupId: string;
  readonly executeTopic: string;
  readonly concurrency: number;
}

/** Executors as OS processes (bench/src/executor-process.ts), members of one arm's executor group. */
export class ExecutorFleet {
  private readonly children: ChildProcess[] = [];
  private readonly output: string[] = [];

  constructor(
    private readonly kafka: Kafka,
    private readonly options: FleetOptions,
  ) {}

  get pids(): number[] {
    return this.children.flatMap((c) => (c.pid === undefined ? [] : [c.pid]));
  }

  /** Starts `count` executor processes and waits until together they hold every partition. */
  async start(count: number, timeoutMs = 60_000): Promise<void> {
    for (let i = 0; i < count; i += 1) this.spawn(`${this.options.groupId}-${i}`);
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const started = Date.now();
      for (;;) {
        const dead = this.children.find((c) => c.exitCode !== null || c.signalCode !== null);
        if (dead !== undefined) throw new Error(`an executor process exited before joining: ${this.output.join('').slice(-1_000)}`);
        const { groups } = await admin.describeGroups([this.options.groupId]);
        const members = groups[0]?.state === 'Stable' ? groups[0].members : [];
        const held = new Set(
          members.flatMap((m) => (m.memberAssignment.length === 0 ? [] : (AssignerProtocol.MemberAssignment.decode(m.memberAssignment)?.assignment[this.options.executeTopic] ?? []))),
        );
        if (members.length === count && held.size === PARTITIONS) return;
        if (Date.now() - started > timeoutMs) throw new Error(`executor group ${this.options.groupId} not ready after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    } finally {
      await admin.disconnect();
    }
  }

  /** Peak resident set of each process so far (VmHWM), in MiB. */
  peakRssMiB(): number[] {
    return this.pids.map((pid) => statusKiB(pid, 'VmHWM') / 1024);
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
            child.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            child.kill('SIGTERM');
          }),
      ),
    );
  }

  private spawn(id: string): void {
    const child = spawn(process.execPath, [ENTRYPOINT], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: process.env['HOME'] ?? '',
        KAFKAJS_NO_PARTITIONER_WARNING: '1',
        KAFKA_BROKERS: config.brokers.join(','),
        SCHEMA_REGISTRY_URL: config.registryUrl,
        REDIS_URL: redisUrlFromEnv(),
        GATEHOUSE_TOPIC_PREFIX: this.options.topicPrefix,
        GATEHOUSE_TOPIC_PARTITIONS: String(PARTITIONS),
        GATEHOUSE_TOPIC_RETENTION_MS: String(config.topicSettings.retentionMs),
        GATEHOUSE_REDIS_PREFIX: this.options.redisPrefix,
        EXECUTOR_GROUP_ID: this.options.groupId,
        EXECUTOR_ID: id,
        GATEHOUSE_TRUSTED_KEYS: BENCH_SIGNING.trustedKey,
        EXECUTOR_CONCURRENCY: String(this.options.concurrency),
        EXECUTOR_TENANT_CONCURRENCY: String(EXECUTOR_SETTINGS.perTenantConcurrency),
        EXECUTOR_LEASE_MS: String(EXECUTOR_SETTINGS.leaseMs),
        LOG_LEVEL: process.env['BENCH_LOG_LEVEL'] ?? 'info',
      },
      // Log lines go to /dev/null, as the in-process services' do; stderr is kept for crash reports.
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (this.output.length < 200) this.output.push(chunk.toString('utf8'));
    });
    this.children.push(child);
  }
}

/** A `Vm*` line of /proc/<pid>/status, in KiB (0 when the process is gone). */
export function statusKiB(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${field}:`));
    return line === undefined ? 0 : Number(/(\d+)/.exec(line)?.[1] ?? 0);
  } catch {
    return 0;
  }
}
