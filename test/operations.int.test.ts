import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallResult } from '@gatehouse/client';
import type { Run } from '@gatehouse/state';
import { CONTROL_TOKEN, startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';

interface Operation {
  operation_id: string;
  state: string;
  progress: number;
}

describe('long-running operations and cancellation, told truthfully', () => {
  let g: Gatehouse;
  let run: Run;

  beforeAll(async () => {
    g = await startGatehouse('operations', { exportStepMs: 3_000 });
    run = await g.createRun('ops-admin');
  });
  afterAll(async () => {
    await g.stop();
  });

  const call = (tool: string, args: unknown, as: Run = run): Promise<CallResult> =>
    g.client.call(tool, args, { runId: as.run_id, tenant: as.tenant });
  const start = async (): Promise<string> => {
    const started = await call('start_customer_export.v1', { customer_id: 'C-1842', format: 'json' });
    if (!started.ok) throw new Error(`export refused: ${started.error.code}`);
    return (started.result as Operation).operation_id;
  };
  // Polling is the protocol of a long operation (get_operation); bounded by time, not by count.
  const poll = async (id: string, until: (op: Operation) => boolean, timeoutMs = 30_000): Promise<Operation> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const polled = await call('get_operation.v1', { operation_id: id });
      if (!polled.ok) throw new Error(polled.error.code);
      const op = polled.result as Operation;
      if (until(op)) return op;
      if (Date.now() > deadline) throw new Error(`operation ${id} never reached the expected state (last: ${op.state} ${op.progress}%)`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it('returns an operation resource, stops it while queued, and says so', async () => {
    const id = await start();
    expect((await poll(id, () => true)).state).toBe('queued');
    const cancelled = await call('cancel_operation.v1', { operation_id: id });
    expect(cancelled.ok && cancelled.result).toEqual({ operation_id: id, outcome: 'stopped', state: 'cancelled' });
    expect((await poll(id, () => true)).state).toBe('cancelled');
  });

  it('answers not_interruptible while the job finalizes, and already_completed once it succeeded', async () => {
    const id = await start();
    const seen = await poll(id, (op) => (op.state === 'running' && op.progress >= 85) || op.state === 'succeeded');
    const late = await call('cancel_operation.v1', { operation_id: id });
    // Finalizing cannot be interrupted; a job that finished meanwhile says so. Never "stopped".
    expect(late.ok && (late.result as { outcome: string }).outcome).toMatch(
      seen.state === 'succeeded' ? /^already_completed$/ : /^(not_interruptible|already_completed)$/,
    );
    const done = await poll(id, (op) => op.state === 'succeeded');
    expect(done.progress).toBe(100);
    const after = await call('cancel_operation.v1', { operation_id: id });
    expect(after.ok && after.result).toEqual({ operation_id: id, outcome: 'already_completed', state: 'succeeded' });
  });

  it('stops a run: its future calls are refused, and what it already started is not undone', async () => {
    const doomed = await g.createRun('ops-admin');
    const started = await call('start_customer_export.v1', { customer_id: 'C-1842', format: 'csv' }, doomed);
    if (!started.ok) throw new Error(started.error.code);
    const id = (started.result as Operation).operation_id;
    const stop = await fetch(`${g.policies[0]?.url ?? ''}/runs/${doomed.run_id}/stop`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
    });
    expect(((await stop.json()) as { outcome: string }).outcome).toBe('stopped');
    const refused = await call('get_operation.v1', { operation_id: id }, doomed);
    expect(refused.ok === false && refused.error.code).toBe('RUN_NOT_FOUND');
    expect(refused.ok === false && refused.error.message).toContain('was stopped');
    // The export the run started keeps going; another run can see it finish.
    expect((await poll(id, (op) => op.state === 'succeeded')).state).toBe('succeeded');
  });
});
