// Surface: the four-eyes rule of the approval API (docs/threat-model.md, "A4"). The attackers: a
// person who is both an approver and the person an agent acts for, and trusted code that names a
// run's principal after an approver. The promise: four eyes compare IdP identities (issuer and
// subject) only. A display name, an email or a principal string decides nothing: renaming oneself
// never lets a person approve their own agent's write, and naming a run after an approver never
// locks that approver out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalRequest, startApprovalHarness } from '../support/approval.js';
import type { ApprovalHarness } from '../support/approval.js';
import { decideAs } from '../support/decide.js';
import { ISSUER, PEOPLE, stackIdentity, tokensOf } from '../support/identity.js';

describe('four eyes at the approval API, with people of the identity provider', () => {
  let h: ApprovalHarness;

  beforeAll(async () => {
    h = await startApprovalHarness('atk-self', { identity: await stackIdentity(), tokens: false });
  });
  afterAll(async () => {
    await h?.stop();
  });

  const stateOf = async (proposalId: string): Promise<string | undefined> =>
    (await h.db.query<{ state: string }>(`SELECT state FROM ${h.t.requests} WHERE proposal_id = $1`, [proposalId])).rows[0]?.state;

  it('refuses the person a run acts for, whatever name the run or the person carries', async () => {
    // The run names its person by issuer and subject; its principal and the name say someone else.
    const request = approvalRequest({
      principal: 'agent:support-bot',
      on_behalf_of: { issuer: ISSUER, subject: PEOPLE.owner.subject, name: 'Somebody Else' },
    });
    await h.submit(request);
    const owner = (await tokensOf(PEOPLE.owner)).access_token;
    const self = await decideAs<{ error: { code: string } }>(h.url(), request.proposal_id, 'approve', owner, { waitForRequest: true });
    expect([self.status, self.body.error.code]).toEqual([403, 'SELF_APPROVAL']);
    expect(await stateOf(request.proposal_id)).toBe('pending');
  });

  it('lets another approver decide though the run’s principal is spelled as their name', async () => {
    // Trusted code named the run's principal after the lead; the person it acts for is the owner.
    const request = approvalRequest({
      principal: PEOPLE.lead.username,
      on_behalf_of: { issuer: ISSUER, subject: PEOPLE.owner.subject, name: PEOPLE.owner.name },
    });
    await h.submit(request);
    const lead = (await tokensOf(PEOPLE.lead)).access_token;
    const approved = await decideAs<{ state: string }>(h.url(), request.proposal_id, 'approve', lead, { waitForRequest: true });
    expect([approved.status, approved.body.state]).toEqual([200, 'approved']);
  });
});
