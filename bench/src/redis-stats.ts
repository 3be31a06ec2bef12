import { createRedis, redisUrlFromEnv } from '@gatehouse/state';
import type { Redis } from '@gatehouse/state';
import { median, spreadOf } from './stats.js';
import type { Spread } from './stats.js';

/**
 * Redis commands per call, two ways:
 *
 * - **ran**: Redis' own count (`INFO commandstats`, summed over a cluster's masters) of every command
 *   it executed in a window, whoever sent it. It counts the commands a Lua script runs (`redis.call`)
 *   besides the EVALSHA itself, and the commands of a MULTI/EXEC besides MULTI and EXEC.
 * - **sent**: the commands the services sent, counted as ioredis hands each one to its socket: an
 *   EVALSHA is one, whatever its script runs. Each service process counts what its own connection
 *   sends and reports it with its CPU sample (child-process.ts); the bench process counts what it
 *   hosts itself (arm m's front door) on its services connection.
 *
 * Both count commands, not round trips: the commands of one pipeline (or of one auto-pipelined tick,
 * which may hold several calls' commands) are each counted. Two figures come closer to round trips:
 * **batches**, the writes the services' connections made (a lone command or one pipeline each), and
 * **reads**, the times Redis read from a client socket (`total_reads_processed`). Under load one
 * batch carries the commands of many calls, so both are below the round trips one call waits for.
 *
 * The bench's own traffic is kept out: its INFO calls are counted and subtracted, and setup (runs,
 * tokens) and cleanup happen outside the windows. Each window starts and ends when Redis is quiet
 * (no command but the bench's INFO for one poll interval), so the last calls' trailing commands fall
 * inside their own window. Any other client of the same Redis would show in `ran`: the relay arms,
 * which use no Redis, are the check (they read 0).
 */

/** What ran and what was sent in one window, divided by nothing yet. */
export interface RedisWindow {
  /** The calls the window's figures are divided by: answered calls (ok or not). */
  readonly calls: number;
  readonly ms: number;
  /** Whether Redis was quiet at both ends (else the end was taken after the longest wait). */
  readonly quiet: boolean;
  /** Commands Redis ran, by name (`INFO commandstats`), the bench's INFO calls removed. */
  readonly ran: Readonly<Record<string, number>>;
  /** Commands the services sent, by name, each process counting its own connection. */
  readonly sent: Readonly<Record<string, number>>;
  /** Writes of the services' connections: a lone command or a whole pipeline each. */
  readonly batches: number;
  /** Times Redis read a client socket (`total_reads_processed`), the bench's own removed; null if Redis does not say. */
  readonly reads: number | null;
}

/** A variant's Redis figures per call: medians over its repetitions. */
export interface RedisPerCall {
  /** Commands Redis ran per call (script and transaction internals included). */
  readonly ran: Spread;
  readonly ranByCommand: Readonly<Record<string, number>>;
  /** Commands the services sent per call. */
  readonly sent: Spread;
  readonly sentByCommand: Readonly<Record<string, number>>;
  /** ran − sent by name: what Lua scripts ran per call. */
  readonly insideScripts: Readonly<Record<string, number>>;
  readonly batches: Spread;
  readonly reads: Spread | null;
  /** Every window started and ended with Redis quiet. */
  readonly quiet: boolean;
}

/** Counts at one instant. */
interface Mark {
  readonly at: number;
  readonly quiet: boolean;
  readonly ran: ReadonlyMap<string, number>;
  /** total_commands_processed: every command, the bench's INFO calls included. */
  readonly processed: number;
  readonly reads: number | null;
  /** INFO calls the bench had sent before this mark's own (each node's counts hold all of those, not this one). */
  readonly infoBefore: number;
  readonly sent: ReadonlyMap<string, number>;
  readonly batches: number;
}

/** How ioredis hands a command to its socket: every command, pipelined or not, passes here. */
interface CommandSink {
  sendCommand: (command: { readonly name: string }, stream?: { readonly isPipeline?: boolean }, ...rest: unknown[]) => unknown;
}

const POLL_MS = 50;
const QUIET_WAIT_MAX_MS = 2_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The `cmdstat_<name>:calls=N` counts and the two totals of an `INFO all` reply. */
function parseInfo(text: string): { ran: Map<string, number>; processed: number; reads: number | null } {
  const ran = new Map<string, number>();
  let processed = 0;
  let reads: number | null = null;
  for (const line of text.split('\n')) {
    const stat = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (stat !== null) ran.set(stat[1] as string, Number(stat[2]));
    else if (line.startsWith('total_commands_processed:')) processed = Number(line.slice('total_commands_processed:'.length));
    else if (line.startsWith('total_reads_processed:')) reads = Number(line.slice('total_reads_processed:'.length));
  }
  return { ran, processed, reads };
}

const plus = (into: Map<string, number>, name: string, n: number) => into.set(name, (into.get(name) ?? 0) + n);

function difference(after: ReadonlyMap<string, number>, before: ReadonlyMap<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, n] of after) {
    const d = n - (before.get(name) ?? 0);
    if (d !== 0) out[name] = d;
  }
  return out;
}

/** Commands handed to one Redis connection so far, by name, and the writes that carried them. */
export interface SendCount {
  readonly sent: Map<string, number>;
  batches: number;
}

/**
 * Counts what is sent on `connection` from now on. It wraps the connection's `sendCommand`, which
 * every command passes (a pipeline's commands with the pipeline's stream, written in one go).
 */
export function countSends(connection: Redis): SendCount {
  const count: SendCount = { sent: new Map(), batches: 0 };
  const sink = connection as unknown as CommandSink;
  const send = sink.sendCommand;
  const pipelines = new WeakSet<object>();
  sink.sendCommand = (command, stream, ...rest) => {
    plus(count.sent, command.name.toLowerCase(), 1);
    if (stream?.isPipeline !== true) count.batches += 1;
    else if (!pipelines.has(stream)) {
      pipelines.add(stream);
      count.batches += 1;
    }
    return send.call(connection, command, stream, ...rest);
  };
  return count;
}

/** What the services of a window sent, counted in their own processes: the difference of two samples. */
export interface SentElsewhere {
  readonly sent: Readonly<Record<string, number>>;
  readonly batches: number;
}

/** Reads Redis' statistics on a connection of its own, and counts what is sent on the bench process's services connection. */
export class RedisCounter {
  private constructor(
    private readonly stats: Redis,
    private readonly own: SendCount,
  ) {}

  private infoCalls = 0;

  /**
   * Opens the statistics connection and starts counting the commands sent on `services`, the
   * connection the bench process hands what it hosts itself (arm m's front door).
   */
  static open(services: Redis): RedisCounter {
    return new RedisCounter(createRedis(redisUrlFromEnv(), 'bench-redis-stats'), countSends(services));
  }

  /** One INFO per node (a cluster's masters, or the one server), summed. */
  private async snapshot(quiet: boolean): Promise<Mark> {
    const nodes: Redis[] = 'nodes' in this.stats ? this.stats.nodes('master') : [this.stats];
    const infoBefore = this.infoCalls;
    this.infoCalls += nodes.length;
    const replies = await Promise.all(nodes.map((node) => node.info('all')));
    const ran = new Map<string, number>();
    let processed = 0;
    let reads: number | null = 0;
    for (const reply of replies) {
      const parsed = parseInfo(reply);
      for (const [name, n] of parsed.ran) plus(ran, name, n);
      processed += parsed.processed;
      reads = reads === null || parsed.reads === null ? null : reads + parsed.reads;
    }
    return { at: Date.now(), quiet, ran, processed, reads, infoBefore, sent: new Map(this.own.sent), batches: this.own.batches };
  }

  /**
   * A mark taken once Redis is quiet: two INFO snapshots a poll interval apart between which Redis ran
   * nothing but the first INFO. Gives up after QUIET_WAIT_MAX_MS and says so.
   */
  async mark(): Promise<Mark> {
    const started = Date.now();
    let previous = await this.snapshot(false);
    for (;;) {
      await sleep(POLL_MS);
      const next = await this.snapshot(false);
      const others = next.processed - previous.processed - (next.infoBefore - previous.infoBefore);
      if (others === 0) return { ...next, quiet: true };
      if (Date.now() - started >= QUIET_WAIT_MAX_MS) return next;
      previous = next;
    }
  }

  /**
   * Redis' and the services' counts between two marks: what this process's connection sent plus
   * `elsewhere`, what the window's service processes counted of their own sends.
   */
  window(before: Mark, after: Mark, calls: number, elsewhere: SentElsewhere = { sent: {}, batches: 0 }): RedisWindow {
    // Each node's counts at a mark hold every INFO the bench sent before that mark's own.
    const ownInfo = after.infoBefore - before.infoBefore;
    const ranAfter = new Map(after.ran);
    plus(ranAfter, 'info', -ownInfo);
    const sentAfter = new Map(after.sent);
    for (const [name, n] of Object.entries(elsewhere.sent)) plus(sentAfter, name, n);
    return {
      calls,
      ms: after.at - before.at,
      quiet: before.quiet && after.quiet,
      ran: difference(ranAfter, before.ran),
      sent: difference(sentAfter, before.sent),
      batches: after.batches - before.batches + elsewhere.batches,
      // Every INFO is one read of its own.
      reads: after.reads === null || before.reads === null ? null : after.reads - before.reads - ownInfo,
    };
  }

  /** What Redis ran while no call was in flight, over `ms`: what any window holds that no call caused. */
  async idle(ms: number): Promise<RedisWindow> {
    const before = await this.mark();
    await sleep(ms);
    return this.window(before, await this.mark(), 0);
  }

  async close(): Promise<void> {
    await this.stats.quit();
  }
}

const total = (counts: Readonly<Record<string, number>>) => Object.values(counts).reduce((n, c) => n + c, 0);

/** Per name, the median over windows of count / calls (a name a window lacks counts 0 there). */
function medianByName(
  windows: readonly RedisWindow[],
  counts: (w: RedisWindow) => Readonly<Record<string, number>>,
): Record<string, number> {
  const names = [...new Set(windows.flatMap((w) => Object.keys(counts(w))))].sort();
  const out: Record<string, number> = {};
  for (const name of names) {
    const m = median(windows.map((w) => (counts(w)[name] ?? 0) / w.calls));
    if (m !== 0) out[name] = m;
  }
  return out;
}

/** The medians of a variant's windows, per answered call; null without a window that answered a call. */
export function redisPerCallOf(windows: readonly RedisWindow[]): RedisPerCall | null {
  const counted = windows.filter((w) => w.calls > 0);
  if (counted.length === 0) return null;
  const perCall = (f: (w: RedisWindow) => number) => spreadOf(counted.map((w) => f(w) / w.calls));
  const inside = (w: RedisWindow): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const [name, n] of Object.entries(w.ran)) {
      const d = n - (w.sent[name] ?? 0);
      if (d > 0) out[name] = d;
    }
    return out;
  };
  return {
    ran: perCall((w) => total(w.ran)),
    ranByCommand: medianByName(counted, (w) => w.ran),
    sent: perCall((w) => total(w.sent)),
    sentByCommand: medianByName(counted, (w) => w.sent),
    insideScripts: medianByName(counted, inside),
    batches: perCall((w) => w.batches),
    reads: counted.every((w) => w.reads !== null) ? perCall((w) => w.reads ?? 0) : null,
    quiet: counted.every((w) => w.quiet),
  };
}

/** One window in a progress line: `redis/call sent 8.00, ran 25.00`. */
export function describeWindow(w: RedisWindow): string {
  if (w.calls === 0) return 'redis/call –';
  const sent = `sent ${(total(w.sent) / w.calls).toFixed(2)}, `;
  return `redis/call ${sent}ran ${(total(w.ran) / w.calls).toFixed(2)}${w.quiet ? '' : ' (Redis was not quiet)'}`;
}
