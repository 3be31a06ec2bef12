// Surface: gatehouse.results, read by an executor before it publishes again an answer a stopped
// executor staged (docs/threat-model.md, "K13"; a policy worker reads it the same way). The attacker: whoever can write gatehouse.results
// (a Gatehouse service's principal, or a grant given by mistake), who wants a waiting call never to
// get its answer. They place a record naming the command on the partition the answer goes to,
// before the takeover: the executor that takes the command over must not take it for the answer.
// The promise: a staged answer is published again unless a record of it that a trusted key signed
// is on its partition already; a record no trusted key signed never keeps the real answer from the
// agent, and the agent gets exactly that one answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventPublisher, EventSigner, generateSigningKey, parseSigningKey, verifyResult } from '@gatehouse/events';
import type { ExecutionOrder, SignedHeaders, ToolResult } from '@gatehouse/events';
import { customerSupportCatalog, customerSupportImplementations } from '@gatehouse/example-customer-support';
import { commandClaimKey } from '@gatehouse/executor';
import { ClaimLedger } from '@gatehouse/state';
import type { Run } from '@gatehouse/state';
import { startGatehouse } from '../support/gatehouse.js';
import type { Gatehouse } from '../support/gatehouse.js';
import { pollUntil } from '../support/poll.js';
import { signedHeaders, TEST_KEY_RING } from '../support/signing.js';
import { eventually } from '../support/stack.js';
import { sandboxAllowsWrites } from '../support/test-policy.js';
import { approvedOrder, collect, currentVersion, orphanStagedWrite, stagedMoveAnswer } from '../support/writes.js';

describe('a record naming a command, placed on the results topic before an executor takes its staged answer over', () => {
  let g: Gatehouse;
  let run: Run;
  let results: Awaited<ReturnType<typeof collect<'results'>>>;
  const stranger = new EventSigner(parseSigningKey(generateSigningKey('executor-stranger').signingKey));

  beforeAll(async () => {
    const catalog = customerSupportCatalog();
    g = await startGatehouse('atk-scan', { catalog, implementations: customerSupportImplementations, table: sandboxAllowsWrites(catalog) });
    run = await g.createRun('support-agent');
    results = await collect(g, 'results');
  });
  afterAll(async () => {
    await results?.stop();
    await g?.stop();
  });

  /** A write order whose command and key a dead executor claimed and staged `answer` on. */
  async function orphaned(line1: string, operationId: string): Promise<{ order: ExecutionOrder; staged: ToolResult }> {
    const before = await currentVersion(g);
    const order = await approvedOrder(
      g,
      run,
      { customer_id: 'C-1842', expected_version: before, destination: { kind: 'new', line1, city: 'York', country: 'GB' } },
      before,
    );
    const staged = stagedMoveAnswer(order, before, operationId);
    await orphanStagedWrite(g, order, staged, 'dead-executor/9');
    return { order, staged };
  }

  async function publishAs(
    signer: EventSigner | undefined,
    role: 'results' | 'execute',
    key: string,
    event: ToolResult | ExecutionOrder,
    headers: Record<string, string>,
  ): Promise<void> {
    const publisher = await EventPublisher.connect(g.kafka, g.serde, signer);
    try {
      if (role === 'results') await publisher.publish('results', key, event as ToolResult, headers);
      else await publisher.publish('execute', key, event as ExecutionOrder, headers);
    } finally {
      await publisher.disconnect();
    }
  }

  it.each([
    { what: 'unsigned', signer: undefined },
    { what: 'signed by a key no Gatehouse service trusts', signer: 'stranger' },
  ])('does not keep the staged answer from the agent when the record is $what', async ({ signer }) => {
    const { order, staged } = await orphaned(`9 ${signer ?? 'unsigned'} Road`, `op_forged_${signer ?? 'unsigned'}`);
    // The attacker's copy of the answer, on the partition the answer goes to (same key, no reply partition).
    await publishAs(signer === undefined ? undefined : stranger, 'results', order.run_id, staged, {});
    await publishAs(undefined, 'execute', order.tenant, order, signedHeaders(order));
    const ledger = new ClaimLedger(g.redis, g.keys);
    await pollUntil(
      async () => ((await ledger.get(commandClaimKey(order.run_id, order.command_id)))?.state === 'succeeded' ? true : undefined),
      30_000,
      'the command settled',
    );
    // The forgery is on the topic too; readers dead-letter it. The real answer follows it.
    const copies = await eventually(
      () => {
        const seen = results.events.filter((r) => r.command_id === order.command_id);
        return seen.length >= 2 ? seen : undefined;
      },
      30_000,
      'the real answer after the forged record',
    );
    expect(copies).toEqual([staged, staged]);
    // Exactly one of them speaks for the command: the executor's, published after the forgery.
    const trusted = copies.filter((r) => verifyResult(r, results.headersOf(r) as SignedHeaders | undefined, TEST_KEY_RING).ok);
    expect(trusted).toEqual([copies[1]]);
  });
});
