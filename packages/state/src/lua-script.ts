import { createHash } from 'node:crypto';
import { GatehouseError } from '@gatehouse/contracts';
import calculateSlot from 'cluster-key-slot';
import type { Cluster, Redis as RedisServer } from 'ioredis';

/** A connection scripts run on: one server, or a Redis Cluster (the same as redis-client.ts's `Redis`). */
type Redis = RedisServer | Cluster;

/** Script calls one batch carries at most: a batch runs atomically, so it holds Redis that long. */
const MAX_BATCH_CALLS = 128;

interface PendingCall {
  readonly script: LuaScript;
  /** Counts only once the replicas the connection asks for hold its writes (see requireReplicas). */
  readonly durable: boolean;
  readonly numKeys: number;
  readonly keysAndArgs: readonly (string | number)[];
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** Every script made in this process, in order; a batch names each call's script by its place here. */
const registry: LuaScript[] = [];
let combined: { readonly count: number; readonly source: string; readonly sha1: string } | undefined;

const sha1Of = (source: string): string => createHash('sha1').update(source).digest('hex');

/**
 * One script holding every registered script as a function, and a loop that runs a batch of calls
 * in order, each with its own KEYS and ARGV. ARGV[1] is the number of calls; then, per call, the
 * script's place in the registry, its key count, its argument count and its arguments. Each call's
 * answer is `{1, reply}`, or `{0, message}` when it raised an error (its effects before the error
 * stay, as they would had it run alone; the calls after it still run).
 */
function combinedScript(): { readonly source: string; readonly sha1: string } {
  if (combined !== undefined && combined.count === registry.length) return combined;
  const functions = registry.map((script, i) => `F[${i + 1}] = function(KEYS, ARGV)\n${script.source}\nend`).join('\n');
  const source = `local F = {}
${functions}
local out = {}
local ki, ai = 0, 1
for c = 1, tonumber(ARGV[1]) do
  local id, nk, na = tonumber(ARGV[ai + 1]), tonumber(ARGV[ai + 2]), tonumber(ARGV[ai + 3])
  ai = ai + 3
  local k, a = {}, {}
  for i = 1, nk do k[i] = KEYS[ki + i] end
  for i = 1, na do a[i] = ARGV[ai + i] end
  ki, ai = ki + nk, ai + na
  local ok, reply = pcall(F[id], k, a)
  if ok and type(reply) == 'table' and reply.err then ok = false end
  if ok then out[c] = {1, reply} else out[c] = {0, type(reply) == 'table' and reply.err or tostring(reply)} end
end
return out
`;
  combined = { count: registry.length, source, sha1: sha1Of(source) };
  return combined;
}

/**
 * How many replicas must hold a durable script call's writes before the call counts, and how long
 * to wait for them. Redis replicates asynchronously: a write its master acknowledged can vanish
 * when a replica that never received it is promoted. WAIT after the write closes that window for
 * the records whose loss could let an effect happen twice or a command be answered twice.
 */
export interface ReplicaBarrier {
  readonly replicas: number;
  readonly timeoutMs: number;
}

/** A durable call whose writes the master holds but not yet the replicas asked for: retry it. */
export class ReplicationUnconfirmed extends GatehouseError<'STORE_UNCONFIRMED'> {
  constructor(
    readonly acknowledged: number,
    readonly required: number,
  ) {
    super(
      'STORE_UNCONFIRMED',
      `Redis confirmed the write on ${acknowledged} of ${required} replicas in time; it may not survive a failover`,
    );
  }
}

const barriers = new WeakMap<Redis, ReplicaBarrier>();

/**
 * Makes durable script calls on this connection wait until `replicas` replicas of the master they
 * ran on hold their writes (at most `timeoutMs`); 0 replicas turns the wait off.
 */
export function requireReplicas(redis: Redis, barrier: ReplicaBarrier): void {
  if (!Number.isInteger(barrier.replicas) || barrier.replicas < 0) throw new Error('replicas must be a whole number ≥ 0');
  if (!Number.isInteger(barrier.timeoutMs) || barrier.timeoutMs < 1) throw new Error('the wait for replicas must be ≥ 1 ms');
  if (barrier.replicas === 0) barriers.delete(redis);
  else barriers.set(redis, barrier);
}

/** What a script call answered, and how many replicas confirmed its writes (undefined: not asked). */
interface Evaluated {
  readonly reply: unknown;
  readonly replicas?: number;
}

const isNoScript = (error: unknown): boolean => error instanceof Error && error.message.startsWith('NOSCRIPT');

/**
 * One EVALSHA: a lone call with its own script, or a batch of calls through the combined script
 * (`batched`), each call's answer then `{1, reply}` or `{0, message}`.
 */
interface Send {
  readonly calls: readonly PendingCall[];
  readonly batched: boolean;
  readonly script: { readonly sha1: string; readonly source: string };
  readonly numKeys: number;
  readonly keysAndArgs: readonly (string | number)[];
}

function sendOf(calls: readonly PendingCall[], batched = calls.length > 1): Send {
  const [only] = calls;
  if (!batched && only !== undefined)
    return { calls, batched: false, script: only.script, numKeys: only.numKeys, keysAndArgs: only.keysAndArgs };
  const keys: (string | number)[] = [];
  const args: (string | number)[] = [calls.length];
  for (const call of calls) {
    keys.push(...call.keysAndArgs.slice(0, call.numKeys));
    args.push(call.script.index + 1, call.numKeys, call.keysAndArgs.length - call.numKeys, ...call.keysAndArgs.slice(call.numKeys));
  }
  return { calls, batched: true, script: combinedScript(), numKeys: keys.length, keysAndArgs: [...keys, ...args] };
}

/** The barrier a send goes under: the connection's, when any call of it is durable. */
const barrierOf = (redis: Redis, calls: readonly PendingCall[]): ReplicaBarrier | undefined =>
  calls.some((call) => call.durable) ? barriers.get(redis) : undefined;

/** A durable call's reply once its replicas confirmed it, else the reason to retry it. */
function confirmed(call: PendingCall, replicas: number | undefined, barrier: ReplicaBarrier | undefined): Error | undefined {
  if (!call.durable || barrier === undefined || replicas === undefined || replicas >= barrier.replicas) return undefined;
  return new ReplicationUnconfirmed(replicas, barrier.replicas);
}

/** Answers each call of a send from what Redis replied to it. */
function answer(send: Send, { reply, replicas }: Evaluated, barrier: ReplicaBarrier | undefined): void {
  send.calls.forEach((call, i) => {
    const unconfirmed = confirmed(call, replicas, barrier);
    if (!send.batched) {
      if (unconfirmed === undefined) call.resolve(reply);
      else call.reject(unconfirmed);
      return;
    }
    const one = Array.isArray(reply) ? (reply[i] as unknown[] | undefined) : undefined;
    if (one === undefined) call.reject(new Error('Redis answered a script batch without this call'));
    else if (unconfirmed !== undefined) call.reject(unconfirmed);
    else if (one[0] === 1) call.resolve(one[1] ?? null);
    else call.reject(new Error(typeof one[1] === 'string' ? one[1] : 'the script failed'));
  });
}

const rejectAll = (send: Send, error: unknown): void => {
  for (const call of send.calls) call.reject(error);
};

/** Replies of a pipeline, each `[error, reply]`; a pipeline that answered nothing is an error. */
async function execPipeline(pipeline: ReturnType<Redis['pipeline']>, expected: number): Promise<[Error | null, unknown][]> {
  const replies = ((await pipeline.exec()) ?? []) as [Error | null, unknown][];
  if (replies.length !== expected) throw new Error(`Redis answered ${replies.length} of ${expected} pipelined commands`);
  return replies;
}

/**
 * Runs one send: EVALSHA, or EVAL when Redis does not hold the script. With a barrier, WAIT
 * follows in the same pipeline: on a cluster it goes to the node the script's keys route to, and it
 * counts the replicas holding everything this connection wrote up to the script.
 */
async function runSend(redis: Redis, send: Send): Promise<void> {
  const barrier = barrierOf(redis, send.calls);
  const once = async (evaluate: 'evalsha' | 'eval'): Promise<Evaluated> => {
    if (barrier === undefined) {
      const reply =
        evaluate === 'evalsha'
          ? await redis.evalsha(send.script.sha1, send.numKeys, ...send.keysAndArgs)
          : await redis.eval(send.script.source, send.numKeys, ...send.keysAndArgs);
      return { reply };
    }
    const pipeline = redis.pipeline();
    if (evaluate === 'evalsha') pipeline.evalsha(send.script.sha1, send.numKeys, ...send.keysAndArgs);
    else pipeline.eval(send.script.source, send.numKeys, ...send.keysAndArgs);
    const [[error, reply] = [null, undefined], [waitError, replicas] = [null, 0]] = await execPipeline(
      pipeline.wait(barrier.replicas, barrier.timeoutMs),
      2,
    );
    if (error) throw error;
    if (waitError) throw waitError;
    return { reply, replicas: Number(replicas) };
  };
  try {
    let evaluated: Evaluated;
    try {
      evaluated = await once('evalsha');
    } catch (error) {
      if (!isNoScript(error)) throw error;
      evaluated = await once('eval');
    }
    answer(send, evaluated, barrier);
  } catch (error) {
    rejectAll(send, error);
  }
}

/**
 * The sends of one turn whose keys live on one cluster node, in one pipeline (one write to the
 * node's socket), with one WAIT after them all under a barrier: WAIT counts what this connection
 * wrote to the node up to it, so one wait confirms every send before it. A send Redis does not hold
 * the script of runs again alone (EVAL, its own WAIT).
 */
async function runOnNode(redis: Redis, sends: readonly Send[], barrier: ReplicaBarrier | undefined): Promise<void> {
  const pipeline = redis.pipeline();
  for (const send of sends) pipeline.evalsha(send.script.sha1, send.numKeys, ...send.keysAndArgs);
  if (barrier !== undefined) pipeline.wait(barrier.replicas, barrier.timeoutMs);
  let replies: [Error | null, unknown][];
  try {
    replies = await execPipeline(pipeline, sends.length + (barrier === undefined ? 0 : 1));
  } catch (error) {
    for (const send of sends) rejectAll(send, error);
    return;
  }
  const [waitError, replicas] = barrier === undefined ? [null, undefined] : (replies[sends.length] ?? [null, 0]);
  sends.forEach((send, i) => {
    const [error, reply] = replies[i] ?? [null, undefined];
    if (error && isNoScript(error)) void runSend(redis, send);
    else if (error) rejectAll(send, error);
    else if (waitError) rejectAll(send, waitError);
    else answer(send, replicas === undefined ? { reply } : { reply, replicas: Number(replicas) }, barrier);
  });
}

/** The calls of one event-loop turn, per connection, waiting to be sent as one script. */
const queues = new WeakMap<Redis, PendingCall[]>();

/** A turn's calls as sends, in order: a lone call alone, more as batches of at most MAX_BATCH_CALLS. */
function sendsOf(calls: readonly PendingCall[]): Send[] {
  // More than one call goes as batches of the combined script, even a last batch of one, so a part
  // of the turn never overtakes an earlier part by running a script Redis already holds while the
  // combined one is being loaded.
  if (calls.length === 1) return [sendOf(calls)];
  const sends: Send[] = [];
  for (let i = 0; i < calls.length; i += MAX_BATCH_CALLS) sends.push(sendOf(calls.slice(i, i + MAX_BATCH_CALLS), true));
  return sends;
}

/**
 * Sends what one turn queued, in the order it was queued. On a cluster a send holds the calls of
 * one hash slot (each call's keys share a slot already), so each goes to the node that owns them,
 * and the sends of one node share a pipeline (and one WAIT, when they hold durable calls and the
 * connection has a barrier).
 */
function flush(redis: Redis): void {
  const calls = queues.get(redis);
  queues.delete(redis);
  if (calls === undefined) return;
  if (!redis.isCluster) {
    for (const send of sendsOf(calls)) void runSend(redis, send);
    return;
  }
  const bySlot = new Map<number, PendingCall[]>();
  for (const call of calls) {
    const first = call.keysAndArgs[0];
    if (call.numKeys === 0 || first === undefined) {
      void runSend(redis, sendOf([call]));
      continue;
    }
    const slot = calculateSlot(String(first));
    const group = bySlot.get(slot);
    if (group === undefined) bySlot.set(slot, [call]);
    else group.push(call);
  }
  const byNode = new Map<string, Send[]>();
  for (const [slot, group] of bySlot) {
    // The slot's master as the client knows it; a slot it knows no owner of goes alone.
    const node = (redis as Cluster).slots[slot]?.[0] ?? `slot ${slot}`;
    const sends = byNode.get(node);
    if (sends === undefined) byNode.set(node, sendsOf(group));
    else sends.push(...sendsOf(group));
  }
  for (const sends of byNode.values())
    void runOnNode(
      redis,
      sends,
      barrierOf(
        redis,
        sends.flatMap((send) => send.calls),
      ),
    );
}

/**
 * A Lua script run by its SHA1 (EVALSHA), so each call sends a 40-byte digest instead of the
 * script's text. Redis forgets scripts when it restarts (or on SCRIPT FLUSH); the NOSCRIPT answer
 * then falls back to EVAL, which loads the script again.
 *
 * Calls made in one event-loop turn on one connection (the records of one Kafka batch, the
 * answers one Redis reply woke) are sent together, in the order they were made, as one EVALSHA of
 * a script that runs each in turn with its own keys and arguments: each call is exactly as atomic
 * as alone, Redis parses one command instead of many, and the client sends and awaits one.
 */
export class LuaScript {
  readonly sha1: string;
  /** This script's place among the process's scripts, which a batch names it by. */
  readonly index: number;

  constructor(readonly source: string) {
    this.sha1 = sha1Of(source);
    this.index = registry.length;
    registry.push(this);
  }

  run(redis: Redis, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown> {
    return this.queue(redis, false, numKeys, keysAndArgs);
  }

  /**
   * As run(), and on a connection that requires replicas (requireReplicas) it resolves only once
   * that many replicas hold the call's writes; otherwise it fails with ReplicationUnconfirmed, its
   * writes made on the master. For records whose loss in a failover could repeat an effect or an
   * answer: their callers act on them only after this resolves.
   */
  runDurable(redis: Redis, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown> {
    return this.queue(redis, true, numKeys, keysAndArgs);
  }

  private queue(redis: Redis, durable: boolean, numKeys: number, keysAndArgs: readonly (string | number)[]): Promise<unknown> {
    // Checked here, as Redis would check a call alone: in a batch a wrong count would shift the
    // keys and arguments of every call after it.
    if (!Number.isInteger(numKeys) || numKeys < 0 || numKeys > keysAndArgs.length) {
      return Promise.reject(new Error(`a script call needs 0 to ${keysAndArgs.length} keys, not ${numKeys}`));
    }
    return new Promise<unknown>((resolve, reject) => {
      let queue = queues.get(redis);
      if (queue === undefined) {
        queue = [];
        queues.set(redis, queue);
        setImmediate(() => flush(redis));
      }
      queue.push({ script: this, durable, numKeys, keysAndArgs, resolve, reject });
    });
  }
}
