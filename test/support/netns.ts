import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);
const RELAY = fileURLToPath(new URL('./tcp-relay.ts', import.meta.url));

/** A service the process inside reaches, as `host:port` in this namespace. */
interface Target {
  readonly host: string;
  readonly port: number;
}

/** What the process inside reaches, and over which link. */
export interface NetnsTargets {
  /** Over the `redis` link. */
  readonly redis: Target;
  /** Over the `kafka` link: the broker (at the same address inside, as its metadata names it), the registry, the system of record. */
  readonly kafka: Target;
  readonly others: readonly Target[];
}

/**
 * A network of the test's own for one process: a namespace whose only ways out are two veth links
 * to this one, `redis` and `kafka` (the broker, the schema registry and the systems of record),
 * each through a TCP relay the test runs. Cutting a link (`ip link set … down`) is a partition:
 * packets are dropped, connections stall, nothing is refused; healing it lets them through again.
 */
export interface Netns {
  readonly name: string;
  /** The command that runs a program inside (`ip netns exec <name>`). */
  readonly via: readonly string[];
  /** Where the process inside finds Redis, the broker (its own address) and each other target, as `host:port`. */
  readonly redis: string;
  readonly kafka: string;
  other(target: Target): string;
  cut(link: 'redis' | 'kafka'): Promise<void>;
  heal(link: 'redis' | 'kafka'): Promise<void>;
  /** Stops the relays and removes the links and the namespace. */
  remove(): Promise<void>;
}

const ip = (...args: string[]) => run('ip', args);

/** Starts the relay with `routes`, inside `via` when given; resolves once it relays. */
async function relay(routes: readonly string[], via: readonly string[] = []): Promise<ChildProcess> {
  const [command = process.execPath, ...prefix] = via.length === 0 ? [process.execPath] : [...via, process.execPath];
  const child = spawn(command, [...prefix, RELAY, ...routes], { stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output.push(chunk.toString());
      if (output.join('').includes('relaying')) resolve();
    });
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.once('exit', (code) => reject(new Error(`the relay ${routes.join(' ')} exited ${code}: ${output.join('')}`)));
  });
  return child;
}

/**
 * Makes the namespace `gh-<n>` (n from 1 to 250, the test's choice, so parallel runs pick others):
 * link `redis` on 10.213.n.0/30 and link `kafka` on 10.213.n.4/30, this side .1 and .5.
 */
export async function makeNetns(n: number, targets: NetnsTargets): Promise<Netns> {
  const name = `gh-${n}`;
  const links = { redis: { here: `gh${n}r0`, there: `gh${n}r1`, net: 0 }, kafka: { here: `gh${n}k0`, there: `gh${n}k1`, net: 4 } };
  const hostOf = (link: 'redis' | 'kafka', side: 1 | 2) => `10.213.${n}.${links[link].net + side}`;
  const relays: ChildProcess[] = [];
  const remove = async (): Promise<void> => {
    for (const child of relays) child.kill('SIGKILL');
    await ip('link', 'del', links.redis.here).catch(() => undefined);
    await ip('link', 'del', links.kafka.here).catch(() => undefined);
    await ip('netns', 'del', name).catch(() => undefined);
  };
  await remove();
  try {
    await ip('netns', 'add', name);
    await ip('netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up');
    for (const link of ['redis', 'kafka'] as const) {
      const { here, there } = links[link];
      await ip('link', 'add', here, 'type', 'veth', 'peer', 'name', there);
      await ip('link', 'set', there, 'netns', name);
      await ip('addr', 'add', `${hostOf(link, 1)}/30`, 'dev', here);
      await ip('link', 'set', here, 'up');
      await ip('netns', 'exec', name, 'ip', 'addr', 'add', `${hostOf(link, 2)}/30`, 'dev', there);
      await ip('netns', 'exec', name, 'ip', 'link', 'set', there, 'up');
    }
    const route = (link: 'redis' | 'kafka', target: Target) => `${hostOf(link, 1)}:${target.port}=${target.host}:${target.port}`;
    relays.push(
      await relay([route('redis', targets.redis), route('kafka', targets.kafka), ...targets.others.map((t) => route('kafka', t))]),
    );
    // The broker's metadata names its own address: inside, that address leads over the kafka link.
    relays.push(
      await relay(
        [`${targets.kafka.host}:${targets.kafka.port}=${hostOf('kafka', 1)}:${targets.kafka.port}`],
        ['ip', 'netns', 'exec', name],
      ),
    );
  } catch (error) {
    await remove();
    throw error;
  }
  return {
    name,
    via: ['ip', 'netns', 'exec', name],
    redis: `${hostOf('redis', 1)}:${targets.redis.port}`,
    kafka: `${targets.kafka.host}:${targets.kafka.port}`,
    other: (target) => `${hostOf('kafka', 1)}:${target.port}`,
    cut: async (link) => {
      await ip('link', 'set', links[link].here, 'down');
    },
    heal: async (link) => {
      await ip('link', 'set', links[link].here, 'up');
    },
    remove,
  };
}
