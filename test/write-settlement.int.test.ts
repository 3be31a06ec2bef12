import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toStoredOutcome, EventPublisher } from '@gatehouse/events';
import type { ExecutionOrder, ToolResult } from '@gatehouse/events';
import type { ToolImplementation } from '@gatehouse/contracts';
import { customerSupportCatalog, customerSupportImplementations } from '@gatehouse/example-customer-support';
import { commandClaimKey } from '@gatehouse/executor';
import { ApprovalStore, ClaimLedger } from '@gatehouse/state';
import type { Run } from '@gatehouse/state';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';
import { pollUntil } from './support/poll.js';
import { eventually } from './support/stack.js';
import { sandboxAllowsWrites } from './support/test-policy.js';
import { approvedOrder, armFaults, collect, currentVersion, orphanStagedWrite, shippingLine1, stagedMoveAnswer } from './support/writes.js';
import { signedHeaders } from './support/signing.js';

const COMMIT = 'commit_address_change.v2';

/**
 * The reference commit as a careful pack author would write it: its status query honours the
 * signal it is given (it refuses to start once that signal has fired). And, for the timeout case,
 * a commit that applies the write and then hangs until the executor's deadline.
 */
function honouring(hangAfterWrite: { on: boolean }): readonly ToolImplementation[] {
  return customerSupportImplementations.map((impl) => {
    if (impl.contract.address !== COMMIT || impl.status === undefined) return impl;
    const status = impl.status.bind(impl);
    return {
      ...impl,
      run: async (args, context) => {
        const result = await impl.run(args, context);
        if (hangAfterWrite.on) {
          await new Promise((_resolve, reject) =>
            context.signal.addEventListener('abort', () => reject(context.signal.reason as Error), { once: true }),
          );
        }
        return result;
      },
      status: (key, context) => {
        if (context.signal.aborted) return Promise.reject(new Error('the status query was given a deadline that had already passed'));
        return status(key, context);
      },
    } satisfies ToolImplementation;
  });
}

// Every ambiguous path of a write, with a status query that honours its signal: each is settled by
// the system of record, none is handed to an operator; a retryable refusal is really retryable; a
// repeated answer is the same answer.
/** The terms the executor claims an order's keys on: a stage on a key Redis lost makes it again with them. */
const termsOf = (order: ExecutionOrder, leaseMs: number) => ({
  argumentsSha256: order.arguments_sha256,
  leaseMs,
  commandId: order.command_id,
});

describe('ambiguous writes are settled whenever the system of record can tell', () => {
  let g: Gatehouse;
  let run: Run;
  const hang = { on: false };
  let operator: Awaited<ReturnType<typeof collect<'operator'>>>;
  let results: Awaited<ReturnType<typeof collect<'results'>>>;

  beforeAll(async () => {
    const catalog = customerSupportCatalog();
    g = await startGatehouse('settle', { faults: true, catalog, implementations: honouring(hang), table: sandboxAllowsWrites(catalog) });
    run = await g.createRun('support-agent');
    operator = await collect(g, 'operator');
    results = await collect(g, 'results');
  });
  afterAll(async () => {
    await operator?.stop();
    await results?.stop();
    await g?.stop();
  });

  /** The ok answer a dead owner had staged for a move from `before` (it may have published it). */
  const stagedAnswer = stagedMoveAnswer;

  const move = (line1: string, version: number): Promise<ExecutionOrder> =>
    approvedOrder(
      g,
      run,
      { customer_id: 'C-1842', expected_version: version, destination: { kind: 'new', line1, city: 'York', country: 'GB' } },
      version,
    );

  async function send(...orders: ExecutionOrder[]): Promise<void> {
    const publisher = await EventPublisher.connect(g.kafka, g.serde);
    try {
      for (const order of orders) await publisher.publish('execute', order.tenant, order, signedHeaders(order));
    } finally {
      await publisher.disconnect();
    }
  }

  const answerTo = (commandId: string, timeoutMs = 30_000): Promise<ToolResult> =>
    eventually(() => results.events.find((r) => r.command_id === commandId), timeoutMs, `the answer to ${commandId}`);

  const handoffsFor = (commandId: string): number => operator.events.filter((h) => h.command_id === commandId).length;

  it.each([
    { path: 'a dropped connection after the commit', fault: 'drop-after-commit' },
    { path: 'a malformed success body', fault: 'malformed-success' },
  ])('settles $path through the status query, with no handoff', async ({ path, fault }) => {
    const before = await currentVersion(g);
    const order = await move(`1 ${path}`, before);
    await armFaults(g, { nextWrites: [fault] });
    await send(order);
    const answer = await answerTo(order.command_id);
    expect(answer.status, JSON.stringify(answer.error)).toBe('ok');
    expect(JSON.parse(answer.result ?? '{}')).toMatchObject({ previous_version: before, new_version: before + 1 });
    expect(handoffsFor(order.command_id)).toBe(0);
    expect(await currentVersion(g)).toBe(before + 1);
  });

  it('settles a write that timed out after it was applied: the status query gets a live deadline of its own', async () => {
    const before = await currentVersion(g);
    const order = await move('2 Timeout Terrace', before);
    hang.on = true;
    try {
      await send(order);
      const answer = await answerTo(order.command_id);
      expect(answer.status, JSON.stringify(answer.error)).toBe('ok');
      expect(JSON.parse(answer.result ?? '{}')).toMatchObject({ new_version: before + 1 });
    } finally {
      hang.on = false;
    }
    expect(handoffsFor(order.command_id)).toBe(0);
    expect(await shippingLine1(g)).toBe('2 Timeout Terrace');
  });

  it('sends a write whose owner died before reaching the system of record again under its key: applied once, no handoff', async () => {
    const before = await currentVersion(g);
    const order = await move('3 Orphan Street', before);
    const key = order.idempotency_key ?? '';
    // A previous owner claimed the key, took the approval and the proposal, and died (its lease ran out).
    const idempotency = new ClaimLedger(g.redis, g.keys);
    expect(await idempotency.claim(key, order.arguments_sha256, 'dead-executor/1', 1, order.command_id)).toEqual({ kind: 'claimed' });
    expect(await new ApprovalStore(g.redis, g.keys).consume(order.approval?.approval_id ?? '', key)).toBe('consumed');
    await send(order);
    const answer = await answerTo(order.command_id);
    expect(answer.status, JSON.stringify(answer.error)).toBe('ok');
    expect(handoffsFor(order.command_id)).toBe(0);
    expect(await currentVersion(g)).toBe(before + 1);
    // A copy of the order delivered later repeats the same answer, operation id included.
    const copy = { ...order, command_id: `${order.command_id}-copy` };
    await send(copy);
    const repeated = await answerTo(copy.command_id);
    expect({ status: repeated.status, operation_id: repeated.operation_id, result: repeated.result }).toEqual({
      status: answer.status,
      operation_id: answer.operation_id,
      result: answer.result,
    });
    expect(await currentVersion(g)).toBe(before + 1);
  });

  it('answers an orphaned write with the answer its dead owner staged, never a second one', async () => {
    const before = await currentVersion(g);
    const order = await move('4 Staged Square', before);
    const key = order.idempotency_key ?? '';
    const idempotency = new ClaimLedger(g.redis, g.keys);
    const staged = stagedAnswer(order, before, 'op_staged_by_the_dead_owner');
    // The owner staged its answer, may have published it, and died before finishing.
    expect(await idempotency.claim(key, order.arguments_sha256, 'dead-executor/2', 1, order.command_id)).toEqual({ kind: 'claimed' });
    expect(await idempotency.stage(key, 'dead-executor/2', toStoredOutcome(staged, 'execute:0:0'), termsOf(order, 1))).toBe('staged');
    await send(order);
    const answer = await answerTo(order.command_id);
    expect({ status: answer.status, operation_id: answer.operation_id, result: answer.result }).toEqual({
      status: 'ok',
      operation_id: staged.operation_id,
      result: staged.result,
    });
    expect((await idempotency.get(key))?.state).toBe('succeeded');
    expect(handoffsFor(order.command_id)).toBe(0);
    // Nothing was sent to the system of record again.
    expect(await currentVersion(g)).toBe(before);
  });

  it('settles the key of a write whose owner died after staging its answer on the command and the key, and answers once with it', async () => {
    const before = await currentVersion(g);
    const order = await move('5 Staged Square', before);
    const key = order.idempotency_key ?? '';
    const idempotency = new ClaimLedger(g.redis, g.keys);
    const staged = stagedAnswer(order, before, 'op_staged_on_both');
    // The owner staged the answer on the command's claim and the write's key, then died before
    // settling the key: the command's redelivery answers from the claim and must settle the key too.
    const outcome = await orphanStagedWrite(g, order, staged, 'dead-executor/3');
    const command = commandClaimKey(order.run_id, order.command_id);
    await send(order);
    const answer = await answerTo(order.command_id);
    expect({ status: answer.status, operation_id: answer.operation_id, result: answer.result, completed_at: answer.completed_at }).toEqual({
      status: 'ok',
      operation_id: staged.operation_id,
      result: staged.result,
      completed_at: staged.completed_at,
    });
    expect(await idempotency.get(key)).toMatchObject({ state: 'succeeded', outcome });
    expect((await idempotency.get(command))?.state).toBe('succeeded');
    expect(results.events.filter((r) => r.command_id === order.command_id)).toHaveLength(1);
    expect(await currentVersion(g)).toBe(before);
  });

  it('publishes nothing again when the answer its dead owner staged is on the results topic already, and settles the command', async () => {
    const before = await currentVersion(g);
    const order = await move('6 Published Place', before);
    const key = order.idempotency_key ?? '';
    const idempotency = new ClaimLedger(g.redis, g.keys);
    const staged = stagedAnswer(order, before, 'op_published_by_the_dead_owner');
    const outcome = await orphanStagedWrite(g, order, staged, 'dead-executor/4');
    const command = commandClaimKey(order.run_id, order.command_id);
    // The owner published its staged answer (signed, where it routes it) and died before marking it published.
    const publisher = await EventPublisher.connect(g.kafka, g.serde);
    try {
      await publisher.publish('results', order.run_id, staged, signedHeaders(staged, { topic: 'results', by: 'executor' }));
    } finally {
      await publisher.disconnect();
    }
    await answerTo(order.command_id);
    await send(order);
    await pollUntil(
      async () => ((await idempotency.get(command))?.state === 'succeeded' ? true : undefined),
      30_000,
      'the command settled',
    );
    expect(await idempotency.get(key)).toMatchObject({ state: 'succeeded', outcome });
    // A later answer on the same partition (same run, same key): once it is read, so is anything published before it.
    const later = await move('7 Later Lane', before);
    await send(later);
    await answerTo(later.command_id);
    expect(results.events.filter((r) => r.command_id === order.command_id)).toEqual([staged]);
  });

  it('frees the key when the system of record refused with a retryable error: the retry runs, and the row changes once', async () => {
    const before = await currentVersion(g);
    const order = await move('5 Retry Row', before);
    await armFaults(g, { nextWrites: ['unavailable'] });
    await send(order);
    const refused = await answerTo(order.command_id);
    expect(refused.error).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
    expect(await currentVersion(g)).toBe(before);
    expect(await new ClaimLedger(g.redis, g.keys).get(order.idempotency_key ?? '')).toBeUndefined();
    const retry = { ...order, command_id: `${order.command_id}-retry` };
    await send(retry);
    const answer = await answerTo(retry.command_id);
    expect(answer.status, JSON.stringify(answer.error)).toBe('ok');
    expect(await currentVersion(g)).toBe(before + 1);
    expect(await shippingLine1(g)).toBe('5 Retry Row');
    // Sent again under the same key, with an assertion of its own: the service saw two, one refused, one applied.
    const writes = g.customers.served.filter((s) => s.call === 'write' && s.idempotencyKey === order.idempotency_key);
    expect(writes.map((w) => w.status)).toEqual([503, 200]);
    expect(new Set(writes.map((w) => w.jti)).size).toBe(2);
  });

  it('names a write order without an idempotency key, and one whose approval is gone, each by its own code', async () => {
    const before = await currentVersion(g);
    const keyless = { ...(await move('6 Keyless Lane', before)), idempotency_key: null };
    const orphanedApproval = await move('7 Vanished Approval', before);
    await g.redis.del(g.keys.approval(orphanedApproval.approval?.approval_id ?? ''));
    await send(keyless, orphanedApproval);
    expect((await answerTo(keyless.command_id)).error).toMatchObject({ code: 'IDEMPOTENCY_KEY_MISSING', retryable: false });
    expect((await answerTo(orphanedApproval.command_id)).error).toMatchObject({ code: 'APPROVAL_NOT_FOUND', retryable: false });
    expect(await currentVersion(g)).toBe(before);
  });
});
