// Surface: gatehouse.results, read by the approval service before its outbox publishes again a
// refusal it may have published already (docs/threat-model.md, "K13"). The attacker: whoever can
// write gatehouse.results (a Gatehouse service's principal, or a grant given by mistake), who wants
// an agent never to learn its proposal was refused. They place a copy of the refusal on the
// partition it goes to before the outbox's retry: the service must not take it for its own.
// The promise: a refusal is published again unless a record of it that this service's key signed is
// on its partition already; a record it did not sign never keeps the real refusal from the agent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventPublisher, EventSigner, generateSigningKey, parseSigningKey, verifyResult } from '@gatehouse/events';
import type { SignedHeaders, ToolResult } from '@gatehouse/events';
import { approvalRequest, startApprovalHarness, TOKENS } from '../support/approval.js';
import type { ApprovalHarness } from '../support/approval.js';
import { decideAs } from '../support/decide.js';
import { TEST_KEY_RING } from '../support/signing.js';
import { eventually } from '../support/stack.js';

describe('a copy of a refusal, placed on the results topic before the approval service’s outbox retries it', () => {
  let h: ApprovalHarness;
  const stranger = new EventSigner(parseSigningKey(generateSigningKey('approval-stranger').signingKey));

  beforeAll(async () => {
    h = await startApprovalHarness('atk-outbox');
  });
  afterAll(async () => {
    await h?.stop();
  });

  async function publishAs(signer: EventSigner | undefined, key: string, result: ToolResult): Promise<void> {
    const publisher = await EventPublisher.connect(h.topics.kafka, h.topics.serde, signer);
    try {
      await publisher.publish('results', key, result);
    } finally {
      await publisher.disconnect();
    }
  }

  it.each([
    { what: 'unsigned', signer: undefined },
    { what: 'signed by a key no Gatehouse service trusts', signer: stranger },
  ])('does not keep the refusal from the agent when the copy is $what', async ({ signer }) => {
    const request = approvalRequest();
    await h.submit(request);
    await decideAs(h.url(), request.proposal_id, 'reject', TOKENS.lead, { reason: 'Wrong customer' });
    const out = await h.events.waitFor('results', (r) => r.command_id === request.command_id, 'the rejection');
    // As if the service had died after committing the decision and before publishing what it causes
    // (the decision time moved, so the refusal on the topic is not the one to publish now).
    await h.db.query(
      `UPDATE ${h.t.requests} SET published_at = NULL, publish_claimed_at = now() - interval '1 hour',
         decided_at = decided_at - interval '1 second' WHERE proposal_id = $1`,
      [request.proposal_id],
    );
    const owed = { ...out, completed_at: Number(out.completed_at) - 1_000 };
    await publishAs(signer, request.run_id, owed);
    await eventually(() => (h.events.seen.results.filter((r) => r.command_id === request.command_id).length === 2 ? true : undefined));

    await h.service.sweep();
    const copies = await eventually(
      () => {
        const seen = h.events.seen.results.filter((r) => r.command_id === request.command_id);
        return seen.length >= 3 ? seen : undefined;
      },
      20_000,
      'the real refusal after the copy',
    );
    expect(copies.slice(1).map((r) => Number(r.completed_at))).toEqual([owed.completed_at, owed.completed_at]);
    // The copy does not verify; the service's refusal, published after it, does.
    const trusted = copies.filter((r) => verifyResult(r, h.events.headersOf(r) as SignedHeaders | undefined, TEST_KEY_RING).ok);
    expect(trusted).toEqual([copies[0], copies[2]]);
  });
});
