import { describe, expect, it, vi } from 'vitest';
import { toolError, ToolFailure } from '@gatehouse/contracts';
import { toStoredOutcome } from '@gatehouse/events';
import type { OperatorHandoff, ToolResult } from '@gatehouse/events';
import { writeOperationId } from '../src/order-context.js';
import { executeWrite } from '../src/write-pipeline.js';
import { answerOf, answers, KEY, order, systemOfRecord, ticketWrite, updateTicketKeyed, world, writeDeps } from './fakes.js';
import type { SystemOfRecord, World } from './fakes.js';

const ORIGIN = 'gatehouse.execute:0:41';

/** Runs one write order through the write path; what it answered comes back. */
async function write(
  w: World,
  sor: SystemOfRecord,
  overrides: Parameters<typeof order>[0] = {},
  implementation = ticketWrite(sor),
): Promise<ToolResult[]> {
  const { results, answer } = answers();
  await executeWrite(order(overrides), implementation, { headers: undefined, origin: ORIGIN }, writeDeps(w), answer);
  return results;
}

/** A write of the tool that honours its idempotency key, its proposal naming that tool, due `dueInMs` from now. */
async function keyedWrite(w: World, sor: SystemOfRecord, dueInMs = 10_000): Promise<ToolResult> {
  const record = w.proposals.records.get('p_1')!;
  Object.assign(record, { proposal: { ...record.proposal, tool: 'update_ticket_keyed.v1' } });
  const overrides = { tool: 'update_ticket_keyed.v1', deadline_at: Date.now() + dueInMs };
  return only(await write(w, sor, overrides, ticketWrite(sor, updateTicketKeyed)));
}

const only = (results: readonly ToolResult[]): ToolResult => {
  expect(results).toHaveLength(1);
  return results[0] as ToolResult;
};
const codeOf = (results: readonly ToolResult[]) => only(results).error?.code;
const stateOf = (w: World) => w.ledger.records.get(KEY)?.state;
const messages = (w: World) => w.lines.map((line) => line.msg);
/** A stored answer of this key, as a previous execution from another record left it. */
const storedAnswer = (status: 'ok' | 'unknown', origin = 'gatehouse.execute:3:7'): string =>
  toStoredOutcome(
    {
      schema_version: 1,
      command_id: 'cmd-0',
      run_id: 'run_1',
      tenant: 'acme',
      tool: 'update_ticket.v1',
      status,
      operation_id: writeOperationId(KEY),
      result: status === 'ok' ? '{"change_id":"chg-0"}' : null,
      error:
        status === 'ok'
          ? null
          : {
              code: 'OUTCOME_UNKNOWN',
              message: 'may or may not',
              retryable: false,
              retry_after_ms: null,
              field: null,
              permitted: [],
              next: null,
              details: null,
            },
      pending: null,
      arguments_sha256: 'x',
      completed_at: 1,
      duration_ms: 5,
    },
    origin,
  );
/** The key in flight under an owner that stopped, its lease run out. */
const orphan = (w: World, staged?: string) =>
  w.ledger.seed(KEY, {
    state: 'in_flight',
    arguments_sha256: order().arguments_sha256,
    owner: 'dead-executor/1',
    lease_until: Date.now() - 1,
    command_id: 'cmd-0',
    ...(staged === undefined ? {} : { staged }),
  });

describe('the write path: claiming the key', () => {
  it('refuses a write with no idempotency key IDEMPOTENCY_KEY_MISSING, running nothing and claiming nothing', async () => {
    const w = world();
    const sor = systemOfRecord();
    expect(codeOf(await write(w, sor, { idempotency_key: null }))).toBe('IDEMPOTENCY_KEY_MISSING');
    expect(sor.runs).toEqual([]);
    expect(w.ledger.calls).toEqual([]);
  });

  it('runs a fresh key once: consumes approval and proposal under the key, holds slots and lock only while running, and stores the answer', async () => {
    const w = world();
    const sor = systemOfRecord();
    const result = only(await write(w, sor));
    expect(result).toMatchObject({ status: 'ok', result: '{"change_id":"chg-1"}', operation_id: writeOperationId(KEY) });
    expect(sor.runs).toEqual([{ status: 'closed', ticket_id: 'T-1' }]);
    expect(sor.credentialsSeen).toEqual(['write-credential']);
    expect(w.ledger.records.get(KEY)).toMatchObject({ state: 'succeeded', outcome: expect.stringContaining('chg-1') as unknown });
    expect(w.approvals.records.get('apr_1')?.consumedBy).toBe(KEY);
    expect(w.proposals.records.get('p_1')).toMatchObject({ state: 'consumed', consumed_by: KEY });
    expect(w.locks.taken).toEqual(['ticket:T-1']);
    expect(w.locks.holders.size).toBe(0);
    expect(w.slots.released).toEqual([writeOperationId(KEY)]);
    expect(messages(w)).toContain('write applied');
  });

  it('answers a retry from another record with the stored outcome, counts it as a retry, and runs nothing', async () => {
    const w = world();
    const sor = systemOfRecord();
    w.ledger.seed(KEY, { state: 'succeeded', arguments_sha256: order().arguments_sha256, outcome: storedAnswer('ok') });
    const retry = vi.spyOn(w.metrics, 'retry');
    const result = only(await write(w, sor, { command_id: 'cmd-2' }));
    expect(result).toMatchObject({ status: 'ok', command_id: 'cmd-2', result: '{"change_id":"chg-0"}' });
    expect(retry).toHaveBeenCalledWith('update_ticket.v1', 'idempotent');
    expect(sor.runs).toEqual([]);
    expect(w.lines.find((line) => line.msg === 'answered from the stored outcome')).toMatchObject({ replay: true, idempotency_key: KEY });
  });

  it('does not count the redelivery of the very record that produced the stored outcome as a retry', async () => {
    const w = world();
    w.ledger.seed(KEY, { state: 'succeeded', arguments_sha256: order().arguments_sha256, outcome: storedAnswer('ok', ORIGIN) });
    const retry = vi.spyOn(w.metrics, 'retry');
    expect(only(await write(w, systemOfRecord())).status).toBe('ok');
    expect(retry).not.toHaveBeenCalled();
  });

  it('answers a key whose outcome was handed to an operator with that OUTCOME_UNKNOWN, never running it again', async () => {
    const w = world();
    const sor = systemOfRecord();
    w.ledger.seed(KEY, { state: 'unknown', arguments_sha256: order().arguments_sha256, outcome: storedAnswer('unknown') });
    const result = only(await write(w, sor));
    expect(result).toMatchObject({ status: 'unknown', error: { code: 'OUTCOME_UNKNOWN' } });
    expect(sor.runs).toEqual([]);
  });

  it('refuses the key with other arguments IDEMPOTENCY_KEY_REUSED and leaves its record alone', async () => {
    const w = world();
    w.ledger.seed(KEY, { state: 'succeeded', arguments_sha256: 'f'.repeat(64), outcome: storedAnswer('ok') });
    expect(codeOf(await write(w, systemOfRecord()))).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(stateOf(w)).toBe('succeeded');
  });

  it('answers IN_PROGRESS, with the lease left, while another command runs under the key', async () => {
    const w = world();
    const sor = systemOfRecord();
    w.ledger.seed(KEY, {
      state: 'in_flight',
      arguments_sha256: order().arguments_sha256,
      lease_until: Date.now() + 60_000,
      command_id: 'cmd-0',
    });
    const result = only(await write(w, sor));
    expect(result.error).toMatchObject({ code: 'IN_PROGRESS' });
    expect(result.error?.retry_after_ms).toBeGreaterThan(50_000);
    expect(sor.runs).toEqual([]);
    expect(w.ledger.records.get(KEY)?.owner).toBe('other-executor/0');
  });

  it('leaves a copy of the very command that is running under the key unanswered, so its record comes back', async () => {
    const w = world();
    w.ledger.seed(KEY, {
      state: 'in_flight',
      arguments_sha256: order().arguments_sha256,
      lease_until: Date.now() + 60_000,
      command_id: 'cmd-1',
    });
    const { results, answer } = answers();
    await expect(
      executeWrite(order(), ticketWrite(systemOfRecord()), { headers: undefined, origin: ORIGIN }, writeDeps(w), answer),
    ).rejects.toThrow('cmd-1 is still running');
    expect(results).toEqual([]);
  });
});

describe('the write path: taking over a key whose owner stopped', () => {
  it('repeats the answer the previous owner staged and settles the key with it, running nothing', async () => {
    const w = world();
    const sor = systemOfRecord();
    const staged = storedAnswer('ok');
    orphan(w, staged);
    const result = only(await write(w, sor));
    expect(result).toMatchObject({ status: 'ok', result: '{"change_id":"chg-0"}' });
    expect(w.ledger.records.get(KEY)).toMatchObject({ state: 'succeeded', outcome: staged });
    expect(sor.runs).toEqual([]);
    expect(sor.asks).toEqual([]);
  });

  it('answers what the status query says was applied, with the status credential, and runs nothing', async () => {
    const w = world();
    const sor = systemOfRecord();
    sor.status = () => Promise.resolve({ state: 'succeeded', result: { change_id: 'chg-9' } });
    orphan(w);
    const result = only(await write(w, sor));
    expect(result).toMatchObject({ status: 'ok', result: '{"change_id":"chg-9"}' });
    expect(stateOf(w)).toBe('succeeded');
    expect(sor.runs).toEqual([]);
    expect(sor.credentialsSeen).toEqual(['status-credential']);
    expect(w.lines.find((line) => line.msg === 'ambiguous write settled by the status query')).toMatchObject({ settled: 'succeeded' });
  });

  it('answers the error the status query says the write failed with, and keeps it on the key', async () => {
    const w = world();
    const sor = systemOfRecord();
    sor.status = () => Promise.resolve({ state: 'failed', error: toolError('VERSION_CONFLICT', 'ticket moved on') });
    orphan(w);
    expect(codeOf(await write(w, sor))).toBe('VERSION_CONFLICT');
    expect(stateOf(w)).toBe('failed');
    expect(sor.runs).toEqual([]);
  });

  it('refuses a status answer outside the output contract OUTPUT_INVALID rather than passing it on', async () => {
    const w = world();
    const sor = systemOfRecord();
    sor.status = () => Promise.resolve({ state: 'succeeded', result: { change_id: 7 } });
    orphan(w);
    expect(codeOf(await write(w, sor))).toBe('OUTPUT_INVALID');
    expect(stateOf(w)).toBe('failed');
  });

  it('hands an orphaned write no status query can settle to an operator: OUTCOME_UNKNOWN, reason owner_lost, the key unknown', async () => {
    const w = world();
    const sor = systemOfRecord();
    sor.status = () => Promise.resolve({ state: 'unknown' });
    orphan(w);
    const unknownOutcome = vi.spyOn(w.metrics, 'unknownOutcome');
    const result = only(await write(w, sor));
    const [handoff] = w.events.of('operator') as OperatorHandoff[];
    expect(handoff).toMatchObject({
      reason: 'owner_lost',
      idempotency_key: KEY,
      command_id: 'cmd-1',
      proposal_id: 'p_1',
      executor: 'executor-1',
    });
    expect(handoff?.last_error).toBe(
      'previous owner dead-executor/1 stopped mid-write; status query: the system of record does not know the key',
    );
    expect(result).toMatchObject({ status: 'unknown', error: { code: 'OUTCOME_UNKNOWN' } });
    expect(JSON.parse(result.error?.details ?? '{}')).toEqual({ handoff_id: handoff?.handoff_id, idempotency_key: KEY });
    expect(stateOf(w)).toBe('unknown');
    expect(sor.asks).toHaveLength(3);
    expect(sor.runs).toEqual([]);
    expect(unknownOutcome).toHaveBeenCalledWith('update_ticket.v1', 'owner_lost');
  });

  it('sends an orphaned write again under its key when its system of record never saw the key and honours it, proving it again first', async () => {
    const w = world();
    const sor = systemOfRecord();
    sor.status = () => Promise.resolve({ state: 'unknown' });
    orphan(w);
    w.approvals.records.set('apr_1', { record: w.approvals.records.get('apr_1')!.record, consumedBy: KEY });
    Object.assign(w.proposals.records.get('p_1')!, {
      proposal: { ...w.proposals.records.get('p_1')!.proposal, tool: 'update_ticket_keyed.v1' },
      state: 'consumed',
      consumed_by: KEY,
    });
    const result = only(await write(w, sor, { tool: 'update_ticket_keyed.v1' }, ticketWrite(sor, updateTicketKeyed)));
    expect(result).toMatchObject({ status: 'ok', result: '{"change_id":"chg-1"}' });
    expect(sor.runs).toHaveLength(1);
    expect(stateOf(w)).toBe('succeeded');
    expect(w.events.of('operator')).toEqual([]);
    expect(messages(w)).toContain('orphaned write unknown to its system of record; sending it again under its key');
  });

  it('never resends when the status query could not be asked, even to a system that honours the key: status_unavailable', async () => {
    const w = world();
    const sor = systemOfRecord();
    sor.status = () => Promise.reject(new Error('connection refused'));
    orphan(w);
    const result = only(await write(w, sor, { tool: 'update_ticket_keyed.v1' }, ticketWrite(sor, updateTicketKeyed)));
    expect(result.error?.code).toBe('OUTCOME_UNKNOWN');
    expect(w.events.of('operator')).toMatchObject([
      { reason: 'status_unavailable', last_error: expect.stringContaining('connection refused') as unknown },
    ]);
    expect(sor.runs).toEqual([]);
  });
});

describe('the write path: proving the write', () => {
  it('refuses the write of a stopped run RUN_NOT_FOUND and gives the key back, consuming nothing', async () => {
    const w = world();
    const sor = systemOfRecord();
    w.runs.set('run_1', { ...w.runs.get('run_1')!, stopped_at: Date.now() - 1 });
    expect(codeOf(await write(w, sor))).toBe('RUN_NOT_FOUND');
    expect(w.ledger.records.has(KEY)).toBe(false);
    expect(w.approvals.records.get('apr_1')?.consumedBy).toBeNull();
    expect(sor.runs).toEqual([]);
    expect(messages(w)).toContain('write refused: the run is no longer active');
  });

  it.each([
    ['an approval that is not there', (w: World) => w.approvals.records.delete('apr_1'), 'APPROVAL_NOT_FOUND'],
    [
      'an expired approval',
      (w: World) =>
        w.approvals.records.set('apr_1', {
          record: { ...w.approvals.records.get('apr_1')!.record, expires_at: Date.now() - 1 },
          consumedBy: null,
        }),
      'APPROVAL_EXPIRED',
    ],
    ['a proposal that is gone', (w: World) => w.proposals.records.delete('p_1'), 'PROPOSAL_NOT_FOUND'],
    [
      'an approval of other arguments',
      (w: World) =>
        w.approvals.records.set('apr_1', {
          record: { ...w.approvals.records.get('apr_1')!.record, arguments_sha256: 'e'.repeat(64) },
          consumedBy: null,
        }),
      'ARGUMENTS_MISMATCH',
    ],
  ] as const)('refuses a write with %s before running it and gives the key back', async (_why, setup, code) => {
    const w = world();
    const sor = systemOfRecord();
    setup(w);
    expect(codeOf(await write(w, sor))).toBe(code);
    expect(w.ledger.calls).toContain(`give_back ${KEY}`);
    expect(w.ledger.records.has(KEY)).toBe(false);
    expect(sor.runs).toEqual([]);
    expect(w.lines.find((line) => line.msg === 'write refused before execution')).toMatchObject({ code });
  });

  it('refuses stored arguments the commit’s proposal schema no longer admits OUTPUT_INVALID, counting it and giving the key back', async () => {
    const w = world();
    const sor = systemOfRecord();
    const args = '{"status":"reopened","ticket_id":"T-1"}';
    const { sha256Hex } = await import('@gatehouse/contracts');
    const sha = sha256Hex(args);
    w.proposals.records.set('p_1', {
      proposal: { ...w.proposals.records.get('p_1')!.proposal, arguments: args, arguments_sha256: sha },
      state: 'open',
      consumed_by: null,
    });
    w.approvals.records.set('apr_1', { record: { ...w.approvals.records.get('apr_1')!.record, arguments_sha256: sha }, consumedBy: null });
    const violation = vi.spyOn(w.metrics, 'outputViolation');
    const result = only(
      await write(w, sor, { arguments: args, arguments_sha256: sha, approval: { ...order().approval!, arguments_sha256: sha } }),
    );
    expect(result.error).toMatchObject({ code: 'OUTPUT_INVALID', field: '/status' });
    expect(violation).toHaveBeenCalledWith('update_ticket.v1', 'OUTPUT_INVALID');
    expect(w.ledger.records.has(KEY)).toBe(false);
    expect(w.approvals.records.get('apr_1')?.consumedBy).toBeNull();
    expect(sor.runs).toEqual([]);
  });

  it('refuses an approval another key used PROPOSAL_CONSUMED, leaving the proposal open and giving the key back', async () => {
    const w = world();
    w.approvals.records.get('apr_1')!.consumedBy = 'run_1:p_0:update';
    const result = only(await write(w, systemOfRecord()));
    expect(result.error).toMatchObject({ code: 'PROPOSAL_CONSUMED', message: 'This approval was already used' });
    expect(w.proposals.records.get('p_1')?.state).toBe('open');
    expect(w.ledger.records.has(KEY)).toBe(false);
  });

  it('refuses a proposal another key used PROPOSAL_CONSUMED and gives the key back', async () => {
    const w = world();
    const sor = systemOfRecord();
    Object.assign(w.proposals.records.get('p_1')!, { state: 'consumed', consumed_by: 'run_1:p_1:other' });
    const result = only(await write(w, sor));
    expect(result.error).toMatchObject({ code: 'PROPOSAL_CONSUMED', message: 'Proposal p_1 was already used' });
    expect(w.ledger.records.has(KEY)).toBe(false);
    expect(sor.runs).toEqual([]);
  });

  it('refuses APPROVAL_NOT_FOUND, running nothing, when the approval left its store between its check and its use', async () => {
    const w = world();
    const sor = systemOfRecord();
    // The approval's TTL runs out after authorize() read it and before consume() takes it.
    w.approvals.consume = (approvalId) => {
      w.approvals.records.delete(approvalId);
      return Promise.resolve('missing');
    };
    const result = only(await write(w, sor));
    expect(result.error).toMatchObject({ code: 'APPROVAL_NOT_FOUND', retryable: false });
    expect(sor.runs).toEqual([]);
    expect(w.proposals.records.get('p_1')?.state).toBe('open');
    expect(w.ledger.records.has(KEY)).toBe(false);
  });

  it('refuses PROPOSAL_NOT_FOUND, running nothing, when the proposal left its store between its check and its use', async () => {
    const w = world();
    const sor = systemOfRecord();
    w.proposals.consume = (proposalId) => {
      w.proposals.records.delete(proposalId);
      return Promise.resolve('missing');
    };
    const result = only(await write(w, sor));
    expect(result.error).toMatchObject({ code: 'PROPOSAL_NOT_FOUND', message: 'Proposal p_1 is gone', retryable: false });
    expect(sor.runs).toEqual([]);
    expect(w.ledger.records.has(KEY)).toBe(false);
  });
});

describe('the write path on a machine whose clock is 30 s off', () => {
  const expiringIn = (w: World, ms: number) =>
    w.approvals.records.set('apr_1', {
      record: { ...w.approvals.records.get('apr_1')!.record, expires_at: w.clock.now() + ms },
      consumedBy: null,
    });

  it('refuses an approval expired by the reference clock though this machine’s clock, 30 s behind, says it is live', async () => {
    const w = world();
    const sor = systemOfRecord();
    w.clock.skewMs = 30_000;
    // 10 s before this machine's now: expired, by the clock the approval was issued by.
    expiringIn(w, -20_000);
    expect(Date.now()).toBeLessThan(w.approvals.records.get('apr_1')!.record.expires_at);
    expect(codeOf(await write(w, sor))).toBe('APPROVAL_EXPIRED');
    expect(sor.runs).toEqual([]);
  });

  it('runs a write whose approval is live by the reference clock though this machine’s clock, 30 s ahead, says it expired', async () => {
    const w = world();
    const sor = systemOfRecord();
    w.clock.skewMs = -30_000;
    expiringIn(w, 10_000);
    w.runs.set('run_1', { ...w.runs.get('run_1')!, expires_at: w.clock.now() + 10_000 });
    expect(Date.now()).toBeGreaterThan(w.approvals.records.get('apr_1')!.record.expires_at);
    expect(only(await write(w, sor, { deadline_at: w.clock.now() + 10_000 })).status).toBe('ok');
    expect(sor.runs).toHaveLength(1);
  });

  it('waits for a slot until the deadline by the reference clock, as this machine’s clock reads it', async () => {
    const w = world();
    const sor = systemOfRecord();
    w.clock.skewMs = -30_000;
    // Due in 5 s by the clock that set it; this machine's clock, 30 s ahead, would read it as long gone.
    const deadlineAt = w.clock.now() + 5_000;
    // Read after the deadline was set, so a millisecond that turns between the two readings cannot
    // make the deadline seem more than 5 s away.
    const asked = Date.now();
    w.slots.free = false;
    expect(codeOf(await write(w, sor, { deadline_at: deadlineAt }))).toBe('TIMEOUT');
    expect(w.slots.deadlines[0]! - asked).toBeGreaterThan(4_000);
    expect(w.slots.deadlines[0]! - asked).toBeLessThanOrEqual(5_000);
  });
});

describe('the write path: slots and the resource lock', () => {
  it('answers TIMEOUT when no slot freed up, gives the key back and reopens the proposal, so committing it again runs', async () => {
    const w = world();
    const sor = systemOfRecord();
    w.slots.free = false;
    const result = only(await write(w, sor));
    expect(result.error).toMatchObject({
      code: 'TIMEOUT',
      retryable: false,
      message: 'No concurrency slot of this tenant freed up before the deadline',
    });
    expect(w.proposals.records.get('p_1')).toMatchObject({ state: 'open', consumed_by: null });
    expect(w.ledger.records.has(KEY)).toBe(false);
    expect(sor.runs).toEqual([]);

    w.slots.free = true;
    const again = only(await write(w, sor, { command_id: 'cmd-2' }));
    expect(again).toMatchObject({ status: 'ok', result: '{"change_id":"chg-1"}' });
    expect(sor.runs).toHaveLength(1);
    expect(stateOf(w)).toBe('succeeded');
  });

  it('answers TIMEOUT when the resource stayed busy, gives the key back and reopens the proposal, so committing it again runs', async () => {
    const w = world();
    const sor = systemOfRecord();
    w.locks.holders.set('ticket:T-1', 'another-write');
    const refused = only(await write(w, sor));
    expect(refused.error).toMatchObject({ code: 'TIMEOUT', retryable: false, message: 'ticket:T-1 stayed busy until the deadline' });
    expect(w.ledger.records.has(KEY)).toBe(false);
    expect(w.proposals.records.get('p_1')).toMatchObject({ state: 'open', consumed_by: null });
    expect(w.slots.held.size).toBe(0);
    expect(sor.runs).toEqual([]);

    w.locks.holders.delete('ticket:T-1');
    const again = only(await write(w, sor, { command_id: 'cmd-2' }));
    expect(again).toMatchObject({ status: 'ok', result: '{"change_id":"chg-1"}' });
    expect(sor.runs).toHaveLength(1);
    expect(stateOf(w)).toBe('succeeded');
  });
});

describe('the write path: a pack whose resourceOf throws', () => {
  it('answers UPSTREAM_ERROR, sends nothing, gives the key back, frees the slots and reopens the proposal', async () => {
    const w = world();
    const sor = systemOfRecord();
    const broken = {
      ...ticketWrite(sor),
      resourceOf: (): string => {
        throw new TypeError('no ticket_id');
      },
    };
    const result = only(await write(w, sor, {}, broken));
    expect(result.error).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: false });
    expect(result.error?.message).toMatch(/resourceOf .*nothing was sent/);
    expect(sor.runs).toEqual([]);
    expect(w.ledger.records.has(KEY)).toBe(false);
    expect(w.slots.held.size).toBe(0);
    expect(w.proposals.records.get('p_1')).toMatchObject({ state: 'open', consumed_by: null });
  });
});

describe('the write path: fencing', () => {
  it('sends nothing when its key was taken over while it waited (its lease ran out), and leaves the answer to the new owner', async () => {
    const w = world();
    const sor = systemOfRecord();
    // Cut off from Redis past its lease: another executor took the key over meanwhile.
    w.slots.onAcquire = () => Object.assign(w.ledger.records.get(KEY)!, { owner: 'other-executor/2', lease_until: Date.now() + 60_000 });
    await expect(write(w, sor)).rejects.toThrow(/taken over by another owner/);
    expect(sor.runs).toEqual([]);
    expect(w.ledger.records.get(KEY)).toMatchObject({ state: 'in_flight', owner: 'other-executor/2' });
    expect(messages(w)).toContain('write not sent: its key was taken over by another owner');
    expect(w.slots.held.size).toBe(0);
  });

  it('sends nothing when its command was taken over while it waited, even on a key it still holds', async () => {
    const w = world();
    const sor = systemOfRecord();
    // The command's new owner got a retryable refusal and gave the key back; this stalled delivery
    // then claimed the free key. Its command is no longer its own.
    const { results, answer } = answers(false);
    await expect(executeWrite(order(), ticketWrite(sor), { headers: undefined, origin: ORIGIN }, writeDeps(w), answer)).rejects.toThrow(
      /command of .* was taken over by another owner/,
    );
    expect(sor.runs).toEqual([]);
    expect(results).toEqual([]);
    expect(messages(w)).toContain('write not sent: its command was taken over by another owner');
    expect(w.slots.held.size).toBe(0);
  });

  it('renews a lease that ran out with no one taking it over, and sends', async () => {
    const w = world();
    const sor = systemOfRecord();
    w.slots.onAcquire = () => Object.assign(w.ledger.records.get(KEY)!, { lease_until: Date.now() - 1 });
    expect(only(await write(w, sor)).status).toBe('ok');
    expect(sor.runs).toHaveLength(1);
  });
});

describe('the write path: the handler’s answer', () => {
  it('reports an answer outside the output contract OUTPUT_INVALID, never the raw answer, and keeps that on the key', async () => {
    const w = world();
    const sor = systemOfRecord();
    sor.run = () => Promise.resolve({ change_id: 'chg-1', secret: 'x' });
    const result = only(await write(w, sor));
    expect(result).toMatchObject({ status: 'error', result: null, error: { code: 'OUTPUT_INVALID' } });
    expect(stateOf(w)).toBe('failed');
  });

  it('keeps a refusal the system of record will repeat on the key, and the proposal consumed', async () => {
    const w = world();
    const sor = systemOfRecord();
    sor.run = () => Promise.reject(new ToolFailure(toolError('NOT_FOUND', 'no such ticket', { retryable: false })));
    expect(codeOf(await write(w, sor))).toBe('NOT_FOUND');
    expect(stateOf(w)).toBe('failed');
    expect(w.proposals.records.get('p_1')?.state).toBe('consumed');
    expect(messages(w)).toContain('write refused by the system of record');
  });

  it('reopens the proposal on VERSION_CONFLICT, counts it, and keeps the conflict on the key', async () => {
    const w = world();
    const sor = systemOfRecord();
    sor.run = () => Promise.reject(new ToolFailure(toolError('VERSION_CONFLICT', 'ticket moved on')));
    const conflicts = vi.spyOn(w.metrics, 'versionConflict');
    expect(codeOf(await write(w, sor))).toBe('VERSION_CONFLICT');
    expect(conflicts).toHaveBeenCalledWith('update_ticket.v1');
    expect(w.proposals.records.get('p_1')).toMatchObject({ state: 'open', consumed_by: null });
    expect(stateOf(w)).toBe('failed');
  });

  it('gives the key back and reopens the proposal on a retryable refusal, so an identical call runs', async () => {
    const w = world();
    const sor = systemOfRecord();
    sor.run = () => Promise.reject(new ToolFailure(toolError('UPSTREAM_ERROR', 'stopping', { retryable: true })));
    const result = only(await write(w, sor));
    expect(result.error).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
    expect(w.ledger.records.has(KEY)).toBe(false);
    expect(w.proposals.records.get('p_1')?.state).toBe('open');
    expect(messages(w)).toContain('write refused by the system of record; nothing applied, the key is free for a retry');
  });

  it('leaves the proposal consumed when its key was taken over before a retryable refusal came back: the new owner writes with it', async () => {
    const w = world();
    const sor = systemOfRecord();
    sor.run = () => {
      // Stalled past its lease while the system of record answered: another executor took the key
      // over and consumed the proposal again to send.
      Object.assign(w.ledger.records.get(KEY)!, { owner: 'other-executor/2', lease_until: Date.now() + 60_000 });
      return Promise.reject(new ToolFailure(toolError('UPSTREAM_ERROR', 'stopping', { retryable: true })));
    };
    expect(codeOf(await write(w, sor))).toBe('UPSTREAM_ERROR');
    expect(w.proposals.records.get('p_1')).toMatchObject({ state: 'consumed', consumed_by: KEY });
    expect(w.ledger.records.get(KEY)).toMatchObject({ state: 'in_flight', owner: 'other-executor/2' });
  });

  it('leaves the proposal consumed on VERSION_CONFLICT when its key was taken over meanwhile', async () => {
    const w = world();
    const sor = systemOfRecord();
    sor.run = () => {
      Object.assign(w.ledger.records.get(KEY)!, { owner: 'other-executor/2', lease_until: Date.now() + 60_000 });
      return Promise.reject(new ToolFailure(toolError('VERSION_CONFLICT', 'ticket moved on')));
    };
    await write(w, sor);
    expect(w.proposals.records.get('p_1')).toMatchObject({ state: 'consumed', consumed_by: KEY });
  });

  it('asks the status query after a plain throw and answers what it says was applied, under the lock', async () => {
    const w = world();
    const sor = systemOfRecord();
    sor.run = () => Promise.reject(new Error('socket hang up'));
    sor.status = () => {
      expect(w.locks.holders.get('ticket:T-1')).toBe(writeOperationId(KEY));
      return Promise.resolve({ state: 'succeeded', result: { change_id: 'chg-3' } });
    };
    const result = only(await write(w, sor));
    expect(result).toMatchObject({ status: 'ok', result: '{"change_id":"chg-3"}' });
    expect(result.duration_ms).not.toBeNull();
    expect(sor.asks).toEqual([KEY]);
    expect(stateOf(w)).toBe('succeeded');
  });

  it('abandons a status ask that ignores its signal at the tool timeout, and hands the write over, freeing slots and lock', async () => {
    const w = world();
    const sor = systemOfRecord();
    sor.run = () => Promise.reject(new Error('socket hang up'));
    sor.status = () => new Promise(() => undefined); // never answers, never looks at its signal
    const result = only(await write(w, sor));
    expect(result.error?.code).toBe('OUTCOME_UNKNOWN');
    expect(sor.asks).toEqual([KEY, KEY, KEY]);
    expect(w.events.of('operator')).toMatchObject([
      {
        reason: 'status_unavailable',
        last_error: 'update_ticket.v1 failed unexpectedly; status query: the status query failed: no answer within 150 ms',
      },
    ]);
    expect(stateOf(w)).toBe('unknown');
    expect(w.slots.held.size).toBe(0);
    expect(w.locks.holders.size).toBe(0);
  });

  it('hands a timed-out write the status query cannot settle to an operator, reason timeout', async () => {
    const w = world();
    const sor = systemOfRecord();
    sor.run = () => new Promise(() => undefined);
    sor.status = () => Promise.resolve({ state: 'unknown' });
    const result = only(await write(w, sor));
    expect(result.error?.code).toBe('OUTCOME_UNKNOWN');
    expect(w.events.of('operator')).toMatchObject([
      {
        reason: 'timeout',
        last_error: 'update_ticket.v1 did not finish within 150 ms; status query: the system of record does not know the key',
      },
    ]);
    expect(stateOf(w)).toBe('unknown');
    expect(w.proposals.records.get('p_1')?.state).toBe('consumed');
    expect(messages(w)).toContain('outcome unknown; handed to an operator');
  });

  it('sends a timed-out write its system of record does not know again under its key, with a credential of its own: applied, no handoff', async () => {
    const w = world();
    const sor = systemOfRecord();
    let sends = 0;
    sor.run = () => (++sends === 1 ? new Promise(() => undefined) : Promise.resolve({ change_id: 'chg-2' }));
    sor.status = () => Promise.resolve({ state: 'unknown' });
    const result = await keyedWrite(w, sor);
    expect(result).toMatchObject({ status: 'ok', result: '{"change_id":"chg-2"}' });
    expect(sor.runs).toHaveLength(2);
    expect(w.events.of('operator')).toEqual([]);
    expect(stateOf(w)).toBe('succeeded');
    expect(messages(w)).toContain('ambiguous write unknown to its system of record; sending it again under its key');
  });

  it('sends a keyed write at most twice: one that times out again, its key still unknown, is handed over, reason timeout', async () => {
    const w = world();
    const sor = systemOfRecord();
    sor.run = () => new Promise(() => undefined);
    sor.status = () => Promise.resolve({ state: 'unknown' });
    const result = await keyedWrite(w, sor);
    expect(result.error?.code).toBe('OUTCOME_UNKNOWN');
    expect(sor.runs).toHaveLength(2);
    expect(w.events.of('operator')).toMatchObject([{ reason: 'timeout' }]);
    expect(stateOf(w)).toBe('unknown');
  });

  it('never sends a keyed write again once the call’s deadline has passed: it is handed over', async () => {
    const w = world();
    const sor = systemOfRecord();
    sor.run = () => new Promise(() => undefined);
    sor.status = () => Promise.resolve({ state: 'unknown' });
    // The send times out at 150 ms and the status query asks for 500 ms more: past this deadline.
    const result = await keyedWrite(w, sor, 400);
    expect(result.error?.code).toBe('OUTCOME_UNKNOWN');
    expect(sor.runs).toHaveLength(1);
  });

  it('never sends a write again when the status query could not be asked, even to a system that honours the key', async () => {
    const w = world();
    const sor = systemOfRecord();
    sor.run = () => new Promise(() => undefined);
    sor.status = () => Promise.reject(new Error('connection refused'));
    const result = await keyedWrite(w, sor);
    expect(result.error?.code).toBe('OUTCOME_UNKNOWN');
    expect(sor.runs).toHaveLength(1);
    expect(w.events.of('operator')).toMatchObject([{ reason: 'status_unavailable' }]);
  });

  it('hands an ambiguous answer of a tool without a status query to an operator, reason ambiguous_answer', async () => {
    const w = world();
    const sor = systemOfRecord();
    sor.run = () => Promise.reject(new ToolFailure(toolError('UPSTREAM_ERROR', 'connection reset'), { ambiguous: true }));
    const noStatus = ticketWrite(sor);
    delete noStatus.status;
    const result = only(await write(w, sor, {}, noStatus));
    expect(result.error?.code).toBe('OUTCOME_UNKNOWN');
    expect(w.events.of('operator')).toMatchObject([
      { reason: 'ambiguous_answer', last_error: 'connection reset; status query: the tool has no status query' },
    ]);
  });
});

describe('the write path: settling', () => {
  it('stages the answer on the key before settling it, and settles it before the answer is kept', async () => {
    const w = world();
    const steps: string[] = [];
    await executeWrite(
      order(),
      ticketWrite(systemOfRecord()),
      { headers: undefined, origin: ORIGIN },
      writeDeps(w),
      answerOf(async (result, keyed) => {
        await keyed?.stage();
        steps.push(`staged ${w.ledger.records.get(KEY)?.staged === undefined ? 'nothing' : 'the answer'}`);
        await keyed?.settle();
        steps.push(`settled ${stateOf(w)}`, `answered ${result.status}`);
      }),
    );
    expect(steps).toEqual(['staged the answer', 'settled succeeded', 'answered ok']);
  });

  it('leaves the key in flight with its answer staged when the answer cannot go out, and frees slots and lock', async () => {
    const w = world();
    const failing = answerOf(async (_result: ToolResult, keyed?: { stage: () => Promise<unknown> }) => {
      await keyed?.stage();
      throw new Error('command taken over');
    });
    await expect(
      executeWrite(order(), ticketWrite(systemOfRecord()), { headers: undefined, origin: ORIGIN }, writeDeps(w), failing),
    ).rejects.toThrow('command taken over');
    expect(w.ledger.records.get(KEY)).toMatchObject({ state: 'in_flight', staged: expect.stringContaining('chg-1') as unknown });
    expect(w.slots.held.size).toBe(0);
    expect(w.locks.holders.size).toBe(0);
  });

  it('gives the key back exactly once for a refusal, before the refusal is answered', async () => {
    const w = world();
    const sor = systemOfRecord();
    w.runs.set('run_1', { ...w.runs.get('run_1')!, stopped_at: Date.now() - 1 });
    const { results } = answers();
    await executeWrite(
      order(),
      ticketWrite(sor),
      { headers: undefined, origin: ORIGIN },
      writeDeps(w),
      answerOf(async (result) => {
        results.push(result);
        return Promise.resolve();
      }),
    );
    expect(codeOf(results)).toBe('RUN_NOT_FOUND');
    expect(w.ledger.calls.filter((call) => call.startsWith('give_back'))).toEqual([`give_back ${KEY}`]);
  });
});
