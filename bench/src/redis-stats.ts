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
 * - **sent**: the commands the in-process services sent on the bench's shared connection (every
 *   in-process service uses it), counted as ioredis hands each one to its socket: an EVALSHA is one,
 *   whatever its script runs. Where services run as other processes (arm e) this count is partial,
 *   and only `ran` is reported.
 *
 * Both count commands, not round trips: the commands of one pipeline (or of one auto-pipelined tick,
 * which may hold several calls' commands) are each counted. Two figures come closer to round trips:
 * **batches**, the writes the services' connection made (a lone command or one pipeline each), and
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
  /** Commands the in-process services sent, by name; null when services also ran in other processes. */
  readonly sent: Readonly<Record<string, number>> | null;
  /** Writes of the services' connection: a lone command or a whole pipeline each; null as `sent`. */
  readonly batches: number | null;
  /** Times Redis read a client socket (`total_reads_processed`), the bench's own removed; null if Redis does not say. */
  readonly reads: number | null;
}

/** A variant's Redis figures per call: medians over its repetitions. */
export interface RedisPerCall {
  /** Commands Redis ran per call (script and transaction internals included). */
  readonly ran: Spread;
  readonly ranByCommand: Readonly<Record<string, number>>;
  /** Commands the services sent per call; null when some services ran in other processes. */
  readonly sent: Spread | null;
  readonly sentByCommand: Readonly<Record<string, number>> | null;
  /** ran − sent by name: what Lua scripts ran per call (null with `sent`). */
  readonly insideScripts: Readonly<Record<string, number>> | null;
  readonly batches: Spread | null;
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
export function parseInfo(text: string): { ran: Map<string, number>; processed: number; reads: number | null } {
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

/** Reads Redis' statistics on a connection of its own, and counts what the services send on theirs. */
export class RedisCounter {
  private readonly sent = new Map<string, number>();
  private batches = 0;
  private infoCalls = 0;

  private constructor(private readonly stats: Redis) {}

  /**
   * Opens the statistics connection and starts counting the commands sent on `services`, the
   * connection the bench hands every in-process service. The count wraps its `sendCommand`, which
   * every command passes (a pipeline's commands with the pipeline's stream, written in one go).
   */
  static open(services: Redis): RedisCounter {
    const counter = new RedisCounter(createRedis(redisUrlFromEnv(), 'bench-redis-stats'));
    const sink = services as unknown as CommandSink;
    const send = sink.sendCommand;
    const pipelines = new WeakSet<object>();
    sink.sendCommand = (command, stream, ...rest) => {
      plus(counter.sent, command.name.toLowerCase(), 1);
      if (stream?.isPipeline !== true) counter.batches += 1;
      else if (!pipelines.has(stream)) {
        pipelines.add(stream);
        counter.batches += 1;
      }
      return send.call(services, command, stream, ...rest);
    };
    return counter;
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
    return { at: Date.now(), quiet, ran, processed, reads, infoBefore, sent: new Map(this.sent), batches: this.batches };
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
   * Redis' and the services' counts between two marks. `partial`: some services of the window ran in
   * other processes, so what the shared connection sent is not all they sent.
   */
  window(before: Mark, after: Mark, calls: number, partial: boolean): RedisWindow {
    // Each node's counts at a mark hold every INFO the bench sent before that mark's own.
    const ownInfo = after.infoBefore - before.infoBefore;
    const ranAfter = new Map(after.ran);
    plus(ranAfter, 'info', -ownInfo);
    return {
      calls,
      ms: after.at - before.at,
      quiet: before.quiet && after.quiet,
      ran: difference(ranAfter, before.ran),
      sent: partial ? null : difference(after.sent, before.sent),
      batches: partial ? null : after.batches - before.batches,
      // Every INFO is one read of its own.
      reads: after.reads === null || before.reads === null ? null : after.reads - before.reads - ownInfo,
    };
  }

  /** What Redis ran while no call was in flight, over `ms`: what any window holds that no call caused. */
  async idle(ms: number): Promise<RedisWindow> {
    const before = await this.mark();
    await sleep(ms);
    return this.window(before, await this.mark(), 0, false);
  }

  async close(): Promise<void> {
    await this.stats.quit();
  }
}

const total = (counts: Readonly<Record<string, number>>) => Object.values(counts).reduce((n, c) => n + c, 0);

/** Per name, the median over windows of count / calls (a name a window lacks counts 0 there). */
function medianByName(windows: readonly RedisWindow[], counts: (w: RedisWindow) => Readonly<Record<string, number>>): Record<string, number> {
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
  const withSent = counted.every((w) => w.sent !== null && w.batches !== null);
  const sentOf = (w: RedisWindow) => w.sent ?? {};
  const inside = (w: RedisWindow): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const [name, n] of Object.entries(w.ran)) {
      const d = n - (sentOf(w)[name] ?? 0);
      if (d > 0) out[name] = d;
    }
    return out;
  };
  return {
    ran: perCall((w) => total(w.ran)),
    ranByCommand: medianByName(counted, (w) => w.ran),
    sent: withSent ? perCall((w) => total(sentOf(w))) : null,
    sentByCommand: withSent ? medianByName(counted, sentOf) : null,
    insideScripts: withSent ? medianByName(counted, inside) : null,
    batches: withSent ? perCall((w) => w.batches ?? 0) : null,
    reads: counted.every((w) => w.reads !== null) ? perCall((w) => w.reads ?? 0) : null,
    quiet: counted.every((w) => w.quiet),
  };
}

/** One window in a progress line: `redis/call sent 8.00, ran 25.00`. */
export function describeWindow(w: RedisWindow): string {
  if (w.calls === 0) return 'redis/call –';
  const sent = w.sent === null ? '' : `sent ${(total(w.sent) / w.calls).toFixed(2)}, `;
  return `redis/call ${sent}ran ${(total(w.ran) / w.calls).toFixed(2)}${w.quiet ? '' : ' (Redis was not quiet)'}`;
}
