import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallResult } from '@gatehouse/client';
import { defineTool, implement, toolError, ToolFailure } from '@gatehouse/contracts';
import type { ToolResult } from '@gatehouse/events';
import type { Run } from '@gatehouse/state';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';
import { recordResults } from './support/results.js';
import type { ResultLog } from './support/results.js';
import { Teardown } from './support/teardown.js';
import { TEST_ROLE, testCatalog } from './support/test-catalog.js';

// What each handler saw: when it was invoked (per command) and the signal it was given.
const invocations = new Map<string, number[]>();
const signals = new Map<string, AbortSignal>();
const invoked = (commandId: string, signal: AbortSignal): number => {
  const times = invocations.get(commandId) ?? [];
  times.push(Date.now());
  invocations.set(commandId, times);
  signals.set(commandId, signal);
  return times.length;
};

const SECRET = `cs-${randomUUID()}`;
const BIG_MARKER = `big-${randomUUID()}`;
const HANG_MS = 500;
const HANG_SAFE_MS = 300;
const MAX_RESULT_BYTES = 512;
const closedInput = { type: 'object', additionalProperties: false, properties: {} } as const;
const common = { effect: 'read', cancel: 'none', maxResultBytes: 4_096 } as const;

const leakyProfile = defineTool({
  ...common,
  name: 'leaky_profile',
  version: 1,
  description: 'Test-only read whose handler returns a field outside its declared view.',
  input: closedInput,
  output: { type: 'object', additionalProperties: false, required: ['customer_id'], properties: { customer_id: { type: 'string' } } },
  retry: 'safe',
  timeoutMs: 2_000,
} as const);

const wrongType = defineTool({
  ...common,
  name: 'wrong_type',
  version: 1,
  description: 'Test-only read whose handler returns a string where its view declares an integer.',
  input: closedInput,
  output: { type: 'object', additionalProperties: false, required: ['count'], properties: { count: { type: 'integer' } } },
  retry: 'never',
  timeoutMs: 2_000,
} as const);

const hangOutput = { type: 'object', additionalProperties: false, properties: {} } as const;
const hangNever = defineTool({
  ...common,
  name: 'hang_never',
  version: 1,
  description: 'Test-only read whose handler never answers and ignores its abort signal.',
  input: closedInput,
  output: hangOutput,
  retry: 'never',
  timeoutMs: HANG_MS,
} as const);
const hangSafe = defineTool({
  ...common,
  name: 'hang_safe',
  version: 1,
  description: 'Test-only safe read whose handler never answers and ignores its abort signal.',
  input: closedInput,
  output: hangOutput,
  retry: 'safe',
  timeoutMs: HANG_SAFE_MS,
} as const);

const bigResult = defineTool({
  ...common,
  name: 'big_result',
  version: 1,
  description: 'Test-only read that returns a string of the requested length.',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['size'],
    properties: { size: { type: 'integer', minimum: 0, maximum: 100_000 } },
  },
  output: { type: 'object', additionalProperties: false, required: ['blob'], properties: { blob: { type: 'string' } } },
  retry: 'never',
  timeoutMs: 2_000,
  maxResultBytes: MAX_RESULT_BYTES,
} as const);

const flakyInput = {
  type: 'object',
  additionalProperties: false,
  required: ['failures', 'code'],
  properties: {
    failures: { type: 'integer', minimum: 0, maximum: 10 },
    code: { type: 'string', enum: ['UPSTREAM_ERROR', 'NOT_FOUND'] },
  },
} as const;
const flakyOutput = {
  type: 'object',
  additionalProperties: false,
  required: ['attempt'],
  properties: { attempt: { type: 'integer' } },
} as const;
const flakySafe = defineTool({
  ...common,
  name: 'flaky_safe',
  version: 1,
  description: 'Test-only safe read that fails the first `failures` times it runs for a call.',
  input: flakyInput,
  output: flakyOutput,
  retry: 'safe',
  timeoutMs: 2_000,
} as const);
const flakyNever = defineTool({
  ...common,
  name: 'flaky_never',
  version: 1,
  description: 'Test-only read that must not be retried and fails the first `failures` times it runs.',
  input: flakyInput,
  output: flakyOutput,
  retry: 'never',
  timeoutMs: 2_000,
} as const);

const flakyRun = (
  args: { failures: number; code: 'UPSTREAM_ERROR' | 'NOT_FOUND' },
  context: { commandId: string; signal: AbortSignal },
) => {
  const attempt = invoked(context.commandId, context.signal);
  if (attempt <= args.failures) {
    // Retryable only when the code says an identical call can succeed.
    return Promise.reject(new ToolFailure(toolError(args.code, `injected failure ${attempt}`)));
  }
  return Promise.resolve({ attempt });
};

const extraTools = [
  implement(leakyProfile, {
    run: (_args, context) => {
      invoked(context.commandId, context.signal);
      return Promise.resolve({ customer_id: 'C-1842', credit_score: SECRET });
    },
  }),
  implement(wrongType, {
    run: (_args, context) => {
      invoked(context.commandId, context.signal);
      return Promise.resolve({ count: 'seven' });
    },
  }),
  implement(hangNever, {
    run: (_args, context) => {
      invoked(context.commandId, context.signal);
      return new Promise<never>(() => undefined);
    },
  }),
  implement(hangSafe, {
    run: (_args, context) => {
      invoked(context.commandId, context.signal);
      return new Promise<never>(() => undefined);
    },
  }),
  implement(bigResult, {
    run: (args, context) => {
      invoked(context.commandId, context.signal);
      const blob = `${BIG_MARKER}${'x'.repeat(Math.max(0, args.size - BIG_MARKER.length))}`;
      return Promise.resolve({ blob });
    },
  }),
  implement(flakySafe, { run: flakyRun }),
  implement(flakyNever, { run: flakyRun }),
];

/** Every value stored under a Redis prefix, as text. */
async function redisText(g: Gatehouse): Promise<string> {
  const parts: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await g.redis.scan(cursor, 'MATCH', `${g.redisPrefix}*`, 'COUNT', 500);
    cursor = next;
    for (const key of keys) {
      const type = await g.redis.type(key);
      if (type === 'string') parts.push((await g.redis.get(key)) ?? '');
      else if (type === 'hash') parts.push(JSON.stringify(await g.redis.hgetall(key)));
      else if (type === 'zset') parts.push(JSON.stringify(await g.redis.zrange(key, 0, -1)));
      else if (type === 'set') parts.push(JSON.stringify(await g.redis.smembers(key)));
      else if (type === 'list') parts.push(JSON.stringify(await g.redis.lrange(key, 0, -1)));
    }
  } while (cursor !== '0');
  return parts.join('\n');
}

describe('the executor’s guards on what a handler returns and how long it runs', () => {
  const teardown = new Teardown();
  let g: Gatehouse;
  let run: Run;
  let results: ResultLog;

  beforeAll(async () => {
    const { catalog, implementations, roles } = testCatalog(extraTools);
    g = teardown.add(await startGatehouse('guards', { catalog, implementations, roles }), (x) => x.stop());
    run = await g.createRun(TEST_ROLE);
    results = teardown.add(await recordResults(g), (r) => r.stop());
  });
  afterAll(() => teardown.run());

  const call = (tool: string, args: unknown): Promise<CallResult> => g.client.call(tool, args, { runId: run.run_id, tenant: run.tenant });
  /** The call's result as it is on the topic; each call has exactly one. */
  const onTopic = async (commandId: string): Promise<ToolResult> => {
    await results.waitFor([commandId], 10_000);
    const records = results.of(commandId);
    expect(records).toHaveLength(1);
    return (records[0] as { event: ToolResult }).event;
  };
  const failure = (result: CallResult) => {
    if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result.result)}`);
    return result.error;
  };

  it('refuses a result with a field outside the view as OUTPUT_INVALID, and the field’s value is never published', async () => {
    const result = await call(leakyProfile.address, {});
    expect(failure(result)).toMatchObject({ code: 'OUTPUT_INVALID', field: '/credit_score', retryable: false });
    const event = await onTopic(result.commandId);
    expect(event.result).toBeNull();
    // An output violation is not a transient failure: the handler ran once.
    expect(invocations.get(result.commandId)).toHaveLength(1);
    const secret = Buffer.from(SECRET, 'utf8');
    expect(results.all.length).toBeGreaterThan(0);
    expect(results.all.filter((r) => r.raw.includes(secret))).toEqual([]);
    expect(results.undecodable).toBe(0);
    expect(await redisText(g)).not.toContain(SECRET);
  });

  it('refuses a value of the wrong type as OUTPUT_INVALID at its field', async () => {
    const result = await call(wrongType.address, {});
    expect(failure(result)).toMatchObject({ code: 'OUTPUT_INVALID', field: '/count', retryable: false });
    expect((await onTopic(result.commandId)).result).toBeNull();
  });

  it('answers TIMEOUT at the declared bound when a handler ignores its signal, without retrying a `never` tool', async () => {
    const result = await call(hangNever.address, {});
    expect(failure(result)).toMatchObject({ code: 'TIMEOUT' });
    const event = await onTopic(result.commandId);
    expect(event.status).toBe('error');
    expect(event.duration_ms).toBeGreaterThanOrEqual(HANG_MS);
    expect(event.duration_ms).toBeLessThan(HANG_MS + 1_500);
    expect(invocations.get(result.commandId)).toHaveLength(1);
    expect(signals.get(result.commandId)?.aborted).toBe(true);
  });

  it('retries a hanging `safe` read twice with backoff, each attempt cut at the bound', async () => {
    const result = await call(hangSafe.address, {});
    expect(failure(result)).toMatchObject({ code: 'TIMEOUT' });
    const event = await onTopic(result.commandId);
    const times = invocations.get(result.commandId) ?? [];
    expect(times).toHaveLength(3);
    const [first = 0, second = 0, third = 0] = times;
    expect(second - first).toBeGreaterThanOrEqual(HANG_SAFE_MS + 100 - 5);
    expect(third - second).toBeGreaterThanOrEqual(HANG_SAFE_MS + 400 - 5);
    const floor = 3 * HANG_SAFE_MS + 100 + 400;
    // Five timers (three attempt bounds, two backoffs), each of which Node may fire up to 1 ms before
    // Date.now says its delay is up (timers run on the event loop's cached millisecond clock): the
    // same allowance as each interval above, once per timer (a CI run measured 1399 against 1400).
    expect(event.duration_ms).toBeGreaterThanOrEqual(floor - 5);
    expect(event.duration_ms).toBeLessThan(floor + 1_500);
  });

  it('releases a result of exactly maxResultBytes and refuses one byte more as RESULT_TOO_LARGE', async () => {
    // The canonical result is {"blob":"…"}: 11 bytes around the string.
    const fits = await call(bigResult.address, { size: MAX_RESULT_BYTES - 11 });
    expect(fits.ok).toBe(true);
    const tooLarge = await call(bigResult.address, { size: MAX_RESULT_BYTES - 10 });
    expect(failure(tooLarge)).toMatchObject({ code: 'RESULT_TOO_LARGE', retryable: false });
    expect((await onTopic(tooLarge.commandId)).result).toBeNull();
    const published = results.all.filter((r) => r.raw.includes(Buffer.from(BIG_MARKER))).map((r) => r.event.command_id);
    expect(published).toEqual([fits.commandId]);
  });

  it('retries a retryable upstream failure of a `safe` read: three attempts with the executor’s backoff', async () => {
    const result = await call(flakySafe.address, { failures: 10, code: 'UPSTREAM_ERROR' });
    expect(failure(result)).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
    const times = invocations.get(result.commandId) ?? [];
    expect(times).toHaveLength(3);
    const [first = 0, second = 0, third = 0] = times;
    expect(second - first).toBeGreaterThanOrEqual(100 - 5);
    expect(third - second).toBeGreaterThanOrEqual(400 - 5);
    expect(third - first).toBeLessThan(500 + 1_000);
    await onTopic(result.commandId);
  });

  it('returns the answer of the attempt that succeeds after two transient failures', async () => {
    const result = await call(flakySafe.address, { failures: 2, code: 'UPSTREAM_ERROR' });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.result).toEqual({ attempt: 3 });
    expect(invocations.get(result.commandId)).toHaveLength(3);
    await onTopic(result.commandId);
  });

  it('does not retry a failure that is not retryable, even on a `safe` read', async () => {
    const result = await call(flakySafe.address, { failures: 10, code: 'NOT_FOUND' });
    expect(failure(result)).toMatchObject({ code: 'NOT_FOUND', retryable: false });
    expect(invocations.get(result.commandId)).toHaveLength(1);
  });

  it('runs the same retryable failure once on a `never` tool', async () => {
    const result = await call(flakyNever.address, { failures: 10, code: 'UPSTREAM_ERROR' });
    expect(failure(result)).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
    expect(invocations.get(result.commandId)).toHaveLength(1);
    await onTopic(result.commandId);
  });
});
