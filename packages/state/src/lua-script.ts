import { createHash } from 'node:crypto';
import calculateSlot from 'cluster-key-slot';
import type { Redis } from './redis-client.js';

/** Script calls one batch carries at most: a batch runs atomically, so it holds Redis that long. */
const MAX_BATCH_CALLS = 128;

interface PendingCall {
  readonly script: LuaScript;
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

async function evalBySha(
  redis: Redis,
  sha1: string,
  source: string,
  numKeys: number,
  keysAndArgs: readonly (string | number)[],
): Promise<unknown> {
  try {
    return await redis.evalsha(sha1, numKeys, ...keysAndArgs);
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
    return await redis.eval(source, numKeys, ...keysAndArgs);
  }
}

/** The calls of one event-loop turn, per connection, waiting to be sent as one script. */
const queues = new WeakMap<Redis, PendingCall[]>();

async function runOne(redis: Redis, call: PendingCall): Promise<void> {
  try {
    call.resolve(await evalBySha(redis, call.script.sha1, call.script.source, call.numKeys, call.keysAndArgs));
  } catch (error) {
    call.reject(error);
  }
}

async function runBatch(redis: Redis, calls: readonly PendingCall[]): Promise<void> {
  const keys: (string | number)[] = [];
  const args: (string | number)[] = [calls.length];
  for (const call of calls) {
    keys.push(...call.keysAndArgs.slice(0, call.numKeys));
    args.push(call.script.index + 1, call.numKeys, call.keysAndArgs.length - call.numKeys, ...call.keysAndArgs.slice(call.numKeys));
  }
  const script = combinedScript();
  let replies: unknown;
  try {
    replies = await evalBySha(redis, script.sha1, script.source, keys.length, [...keys, ...args]);
  } catch (error) {
    for (const call of calls) call.reject(error);
    return;
  }
  calls.forEach((call, i) => {
    const answer = Array.isArray(replies) ? (replies[i] as unknown[] | undefined) : undefined;
    if (answer === undefined) call.reject(new Error('Redis answered a script batch without this call'));
    else if (answer[0] === 1) call.resolve(answer[1] ?? null);
    else call.reject(new Error(typeof answer[1] === 'string' ? answer[1] : 'the script failed'));
  });
}

/**
 * Sends what one turn queued, in the order it was queued. On a cluster a batch holds the calls of
 * one hash slot (each call's keys share a slot already), so each goes to the node that owns them.
 */
function flush(redis: Redis): void {
  const calls = queues.get(redis);
  queues.delete(redis);
  if (calls === undefined) return;
  if (!redis.isCluster) {
    sendInOrder(redis, calls);
    return;
  }
  const bySlot = new Map<number, PendingCall[]>();
  for (const call of calls) {
    const first = call.keysAndArgs[0];
    if (call.numKeys === 0 || first === undefined) {
      void runOne(redis, call);
      continue;
    }
    const slot = calculateSlot(String(first));
    const group = bySlot.get(slot);
    if (group === undefined) bySlot.set(slot, [call]);
    else group.push(call);
  }
  for (const group of bySlot.values()) sendInOrder(redis, group);
}

/**
 * A lone call goes as its own script; more go as batches of the combined script, even a last
 * batch of one, so a part of the turn never overtakes an earlier part by running a script Redis
 * already holds while the combined one is being loaded.
 */
function sendInOrder(redis: Redis, calls: readonly PendingCall[]): void {
  if (calls.length === 1) {
    void runOne(redis, calls[0] as PendingCall);
    return;
  }
  for (let i = 0; i < calls.length; i += MAX_BATCH_CALLS) void runBatch(redis, calls.slice(i, i + MAX_BATCH_CALLS));
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
      queue.push({ script: this, numKeys, keysAndArgs, resolve, reject });
    });
  }
}
