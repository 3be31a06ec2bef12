import { describe, expect, it, vi } from 'vitest';
import { toStoredOutcome } from '@gatehouse/events';
import type { ConsumedRecord, ExecutionOrder, ToolResult } from '@gatehouse/events';
import { commandClaimKey } from '../src/command-claim.js';
import { orderHandler } from '../src/order-handler.js';
import type { OrderHandlerDeps } from '../src/order-handler.js';
import { implement } from '@gatehouse/contracts';
import type { ToolImplementation } from '@gatehouse/contracts';
import { answersOf, KEY, order, readTicket, systemOfRecord, ticketWrite, world, writeDeps } from './fakes.js';
import type { SystemOfRecord, World } from './fakes.js';

const CLAIM = commandClaimKey('run_1', 'cmd-1');
const record: ConsumedRecord = {
  topic: 'gatehouse.execute',
  partition: 0,
  offset: '41',
  key: 'acme',
  timestamp: '0',
  headers: undefined,
  origin: {
    topic: 'gatehouse.execute',
    partition: 0,
    offset: '41',
    timestamp: '0',
    key: null,
    value: Buffer.from('order'),
    headers: undefined,
  },
};

function handler(w: World, sor: SystemOfRecord): (order: ExecutionOrder, record: ConsumedRecord) => Promise<void> {
  const read = implement(readTicket, { run: () => Promise.resolve({ status: 'open' }) });
  const deps: OrderHandlerDeps = {
    ...writeDeps(w),
    publisher: w.events,
    answers: answersOf(w.events),
    implementations: new Map<string, ToolImplementation>([
      ['update_ticket.v1', ticketWrite(sor)],
      ['read_ticket.v1', read],
    ]),
    proposalTtlMs: 60_000,
  };
  return orderHandler(deps);
}

const results = (w: World) => w.events.of('results') as ToolResult[];
const readOrder = (overrides: Partial<ExecutionOrder> = {}) =>
  order({
    tool: 'read_ticket.v1',
    effect: 'read',
    arguments: '{"ticket_id":"T-1"}',
    proposal_id: null,
    approval: null,
    idempotency_key: null,
    ...overrides,
  });

/** The answer a stopped executor staged on the command and the write's key. */
const STAGED_RESULT: ToolResult = {
  schema_version: 1,
  command_id: 'cmd-1',
  run_id: 'run_1',
  tenant: 'acme',
  tool: 'update_ticket.v1',
  status: 'ok',
  operation_id: 'op_1',
  result: '{"change_id":"chg-0"}',
  error: null,
  pending: null,
  arguments_sha256: 'x',
  completed_at: 1,
  duration_ms: 5,
};

/** Leaves the command and its key as an executor that died after staging STAGED_RESULT leaves them; answers it as stored. */
function orphanStaged(w: World): string {
  const staged = toStoredOutcome(STAGED_RESULT, 'gatehouse.execute:0:40');
  for (const key of [CLAIM, KEY])
    w.ledger.seed(key, {
      state: 'in_flight',
      arguments_sha256: order().arguments_sha256,
      lease_until: Date.now() - 1,
      staged,
      command_id: 'cmd-1',
    });
  return staged;
}

describe('the command claim of an order', () => {
  it('publishes one answer for a command and records it on the claim', async () => {
    const w = world();
    await handler(w, systemOfRecord())(order(), record);
    expect(results(w)).toMatchObject([{ status: 'ok', command_id: 'cmd-1' }]);
    expect(w.ledger.records.get(CLAIM)).toMatchObject({ state: 'succeeded' });
  });

  it('gives a command that was answered already nothing, counting the duplicate', async () => {
    const w = world();
    const sor = systemOfRecord();
    const duplicate = vi.spyOn(w.metrics, 'duplicateOrder');
    await handler(w, sor)(order(), record);
    await handler(w, sor)(order(), record);
    expect(results(w)).toHaveLength(1);
    expect(sor.runs).toHaveLength(1);
    expect(duplicate).toHaveBeenCalledWith('answered');
  });

  it('dead-letters an order that reuses a claimed command id with other arguments, answering nothing', async () => {
    const w = world();
    w.ledger.seed(CLAIM, { state: 'succeeded', arguments_sha256: 'f'.repeat(64), outcome: '{}' });
    await handler(w, systemOfRecord())(order(), record);
    expect(results(w)).toEqual([]);
    expect(w.events.raw).toMatchObject([{ topic: 'gatehouse.execute.dlq' }]);
  });

  it('leaves an order whose command a live owner holds unfinished, so it comes back', async () => {
    const w = world();
    w.ledger.seed(CLAIM, { state: 'in_flight', arguments_sha256: order().arguments_sha256, lease_until: Date.now() + 60_000 });
    await expect(
      handler(w, systemOfRecord())(readOrder({ arguments_sha256: order().arguments_sha256, deadline_at: Date.now() - 1 }), record),
    ).rejects.toThrow('still held by other-executor/0');
    expect(results(w)).toEqual([]);
  });

  it('publishes the answer a stopped executor staged on the command, settling the write’s key with it, and runs nothing', async () => {
    const w = world();
    const sor = systemOfRecord();
    const staged = orphanStaged(w);
    await handler(w, sor)(order(), record);
    expect(results(w)).toMatchObject([{ status: 'ok', result: '{"change_id":"chg-0"}' }]);
    expect(w.ledger.records.get(KEY)).toMatchObject({ state: 'succeeded', outcome: staged });
    expect(w.ledger.records.get(CLAIM)).toMatchObject({ state: 'succeeded' });
    expect(sor.runs).toEqual([]);
  });

  it('settles, and publishes nothing again, when the answer a stopped executor staged is on the results topic already', async () => {
    const w = world();
    const sor = systemOfRecord();
    const staged = orphanStaged(w);
    // The stopped executor published it and died before marking it published.
    await w.events.publish('results', 'run_1', STAGED_RESULT);
    const deps = { ...writeDeps(w), publisher: w.events, answers: answersOf(w.events) };
    await orderHandler({ ...deps, implementations: new Map([['update_ticket.v1', ticketWrite(sor)]]), proposalTtlMs: 60_000 })(
      order(),
      record,
    );
    expect(results(w)).toEqual([STAGED_RESULT]);
    expect(deps.answers.asked).toBe(1);
    expect(w.ledger.records.get(KEY)).toMatchObject({ state: 'succeeded', outcome: staged });
    expect(w.ledger.records.get(CLAIM)).toMatchObject({ state: 'succeeded' });
    expect(sor.runs).toEqual([]);
  });

  it('publishes nothing when another owner took the command over while it ran', async () => {
    const w = world();
    const sor = systemOfRecord();
    sor.run = () => {
      w.ledger.records.get(CLAIM)!.owner = 'other-executor/9';
      return Promise.resolve({ change_id: 'chg-1' });
    };
    await expect(handler(w, sor)(order(), record)).rejects.toThrow('taken over by another owner');
    expect(results(w)).toEqual([]);
  });

  it('refuses an order for a tool version this executor does not host TOOL_VERSION_UNAVAILABLE, naming what it hosts', async () => {
    const w = world();
    await handler(w, systemOfRecord())(order({ tool: 'update_ticket.v2' }), record);
    expect(results(w)).toMatchObject([{ status: 'error', error: { code: 'TOOL_VERSION_UNAVAILABLE', next: 'update_ticket.v1' } }]);
  });
});

describe('the read path', () => {
  it('answers a read with its validated result', async () => {
    const w = world();
    await handler(w, systemOfRecord())(readOrder(), record);
    expect(results(w)).toMatchObject([{ status: 'ok', result: '{"status":"open"}' }]);
    expect(w.lines.map((line) => line.msg)).toContain('executed');
  });

  it('refuses a read past its deadline TIMEOUT and a read of a stopped run RUN_NOT_FOUND', async () => {
    const w = world();
    await handler(w, systemOfRecord())(readOrder({ deadline_at: Date.now() - 1 }), record);
    w.runs.set('run_1', { ...w.runs.get('run_1')!, stopped_at: Date.now() - 1 });
    await handler(w, systemOfRecord())(readOrder({ command_id: 'cmd-2' }), record);
    expect(results(w).map((result) => result.error?.code)).toEqual(['TIMEOUT', 'RUN_NOT_FOUND']);
  });
});
