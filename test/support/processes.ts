import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { AssignerProtocol } from 'kafkajs';
import type { Admin } from 'kafkajs';
import { pollUntil } from './poll.js';
import { signingEnvFor } from './signing.js';

/** The built entrypoint of the executor service (build before running tests). */
export const EXECUTOR_MAIN = fileURLToPath(new URL('../../services/executor/dist/main.js', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A port nobody listens on right now (the OS's pick), for a service that needs a positive one. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A service running as its own OS process, as it runs in production. */
export interface ServiceProcess {
  readonly name: string;
  readonly pid: number;
  /** Settles when the process has exited, for whatever reason. */
  readonly exited: Promise<Exit>;
  /** What the process wrote to stdout and stderr so far (for failure messages). */
  output(): string;
  /** Sends `signal` and waits for the exit, escalating to SIGKILL after `graceMs`. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<Exit>;
}

/** Starts `node <script>` from the repository root with exactly `env` added to PATH and HOME. */
export function spawnService(
  name: string,
  script: string,
  env: Readonly<Record<string, string>>,
  /** A command that runs the service inside something, such as a network namespace (`ip netns exec <name>`). */
  via: readonly string[] = [],
): ServiceProcess {
  const [command = process.execPath, ...args] = [...via, process.execPath, script];
  const child = spawn(command, args, {
    cwd: REPO_ROOT,
    // Services run as processes host the reference tool pack, as npm start does, unless told otherwise.
    // …and sign and trust with the test process's key pairs by role, as the in-process services do.
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? '',
      GATEHOUSE_TOOL_PACK: '@gatehouse/example-customer-support',
      ...signingEnvFor(script),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`${name} did not start`);
  const chunks: string[] = [];
  let size = 0;
  const keep = (chunk: Buffer): void => {
    // Bounded: a chatty process must not grow the test's memory.
    if (size > 256 * 1024) return;
    size += chunk.length;
    chunks.push(chunk.toString('utf8'));
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  // Never outlive the test process, whatever happens to it.
  const orphanGuard = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', orphanGuard);
  const exited = new Promise<Exit>((resolve) =>
    child.once('exit', (code, signal) => {
      process.removeListener('exit', orphanGuard);
      resolve({ code, signal });
    }),
  );
  let exit: Exit | undefined;
  void exited.then((e) => (exit = e));
  return {
    name,
    pid: child.pid,
    exited,
    output: () => chunks.join(''),
    async stop(signal = 'SIGTERM', graceMs = 10_000) {
      if (exit !== undefined) return exit;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

interface GroupMember {
  readonly memberId: string;
  readonly clientId: string;
  readonly partitions: readonly number[];
}

export interface GroupView {
  readonly state: string;
  readonly members: readonly GroupMember[];
}

/** The broker's view of a consumer group: its state and which partitions of `topic` each member holds. */
export async function describeGroup(admin: Admin, groupId: string, topic: string): Promise<GroupView> {
  const { groups } = await admin.describeGroups([groupId]);
  const group = groups.find((g) => g.groupId === groupId);
  if (group === undefined) return { state: 'Unknown', members: [] };
  const members = group.members.map((m) => {
    const assignment = m.memberAssignment.length === 0 ? null : AssignerProtocol.MemberAssignment.decode(m.memberAssignment);
    const partitions = [...(assignment?.assignment[topic] ?? [])].sort((a, b) => a - b);
    return { memberId: m.memberId, clientId: m.clientId, partitions };
  });
  return { state: group.state, members };
}

/** A stable group in which every member holds at least one partition and together they hold all `partitions`. */
export function isSpreadOver(view: GroupView, members: number, partitions: number): boolean {
  const held = view.members.flatMap((m) => m.partitions);
  return (
    view.state === 'Stable' &&
    view.members.length === members &&
    view.members.every((m) => m.partitions.length > 0) &&
    new Set(held).size === partitions &&
    held.length === partitions
  );
}

/**
 * Polls the broker until the group satisfies `ready`; rejects after `timeoutMs` with the last view,
 * or as soon as `abort` settles (e.g. a service process exited before joining).
 */
export async function awaitGroup(
  admin: Admin,
  groupId: string,
  topic: string,
  ready: (view: GroupView) => boolean,
  timeoutMs: number,
  abort?: Promise<string>,
): Promise<GroupView> {
  let aborted: string | undefined;
  void abort?.then((why) => (aborted = why));
  let last: GroupView = { state: 'Unknown', members: [] };
  try {
    return await pollUntil(
      async () => {
        if (aborted !== undefined) throw new Error(`gave up waiting for group ${groupId}: ${aborted}`);
        last = await describeGroup(admin, groupId, topic);
        return ready(last) ? last : undefined;
      },
      timeoutMs,
      `group ${groupId}`,
    );
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}; last seen: ${JSON.stringify(last)}`, { cause: error });
  }
}
