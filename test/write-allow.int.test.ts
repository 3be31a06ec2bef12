import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Run } from '@gatehouse/state';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';

describe('a write the policy table allows runs once, under a key made outside the model', () => {
  let g: Gatehouse;
  let run: Run;

  beforeAll(async () => {
    g = await startGatehouse('allow', { exportStepMs: 200 });
    run = await g.createRun('ops-admin');
  });
  afterAll(async () => {
    await g.stop();
  });

  it('starts an export job through the allow rule, polls it to success, and cancels truthfully', async () => {
    const started = await g.client.call('start_customer_export.v1', { customer_id: 'C-1842', format: 'csv' }, { runId: run.run_id, tenant: 'acme' });
    if (!started.ok) throw new Error(`export refused: ${started.error.code} ${started.error.message}`);
    const operation = started.result as { operation_id: string; state: string };
    expect(operation.state).toBe('queued');
    const { rows } = await g.customers.db.query<{ n: string }>(`select count(*) as n from ${g.customers.t.exportJobs}`);
    expect(Number(rows[0]?.n)).toBe(1);

    // Polling is the protocol of a long operation (get_operation); bounded by time, not by count.
    let state = 'queued';
    for (const deadline = Date.now() + 20_000; state !== 'succeeded' && Date.now() < deadline; ) {
      const polled = await g.client.call('get_operation.v1', { operation_id: operation.operation_id }, { runId: run.run_id, tenant: 'acme' });
      if (!polled.ok) throw new Error(polled.error.code);
      state = (polled.result as { state: string }).state;
      if (state !== 'succeeded') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(state).toBe('succeeded');
    const cancel = await g.client.call('cancel_operation.v1', { operation_id: operation.operation_id }, { runId: run.run_id, tenant: 'acme' });
    expect(cancel.ok && cancel.result).toEqual({ operation_id: operation.operation_id, outcome: 'already_completed', state: 'succeeded' });
  });
});
