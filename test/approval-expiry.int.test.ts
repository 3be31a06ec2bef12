import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PendingNotice } from '@gatehouse/client';
import type { Run } from '@gatehouse/state';
import { TOKENS } from './support/approval.js';
import { decideAs } from './support/decide.js';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';
import { eventually } from './support/stack.js';
import { currentVersion, preview, shippingLine1 } from './support/writes.js';

describe('an approval used after it expired', () => {
  let g: Gatehouse;
  let run: Run;

  beforeAll(async () => {
    // Approvals here are valid for 1 ms: every one has lapsed by the time the executor checks it.
    g = await startGatehouse('apexpiry', { approval: { validityMs: 1 } });
    run = await g.createRun('support-agent');
  });
  afterAll(async () => {
    await g.stop();
  });

  it('is refused with APPROVAL_EXPIRED and changes nothing in PostgreSQL', async () => {
    const before = { version: await currentVersion(g), line1: await shippingLine1(g) };
    const proposalId = await preview(g, run, '20 Too Late Terrace');
    let notice: PendingNotice | undefined;
    const settled = g.client.call(
      'commit_address_change.v2',
      { proposal_id: proposalId },
      {
        runId: run.run_id,
        tenant: 'acme',
        onPending: (p) => (notice = p),
      },
    );
    await eventually(() => notice, 20_000, 'pending_approval');
    const approved = await decideAs(g.approval?.url ?? '', proposalId, 'approve', TOKENS.lead, { waitForRequest: true });
    expect(approved.status).toBe(200);
    const result = await settled;
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ code: 'APPROVAL_EXPIRED', retryable: false });
    expect(await currentVersion(g)).toBe(before.version);
    expect(await shippingLine1(g)).toBe(before.line1);
  });
});
