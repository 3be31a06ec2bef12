import { mkdirSync } from 'node:fs';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalArguments } from '@gatehouse/contracts';
import { approvalRequest, startApprovalHarness } from './support/approval.js';
import type { ApprovalHarness } from './support/approval.js';
import { ISSUER, PEOPLE, stackIdentity } from './support/identity.js';
import { pollUntil } from './support/poll.js';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

describe('the approval console in a browser', () => {
  let h: ApprovalHarness;
  let browser: Browser | undefined;
  let page: Page;

  const addressChange = approvalRequest({
    requested_at: Date.now() - 60_000,
    effect: 'Replace the shipping address of customer C-1842 (Marta Kowalska)',
  });
  const email = approvalRequest({
    requested_at: Date.now() - 30_000,
    tenant: 'globex',
    environment: 'production',
    tool: 'send_customer_email.v1',
    ...(() => {
      const { canonical, sha256 } = canonicalArguments({ customer_id: 'G-77', subject: 'Your order', body: 'Hello <b>there</b>' });
      return { arguments: canonical, arguments_sha256: sha256 };
    })(),
    target: { type: 'customer', id: 'G-77', version: 4 },
    effect: 'Email customer G-77 about the delayed order <script>alert(1)</script>',
    diff: {
      changes: [],
      recipients: ['jo.doe@globex.example'],
      amount: null,
      affected_records: 1,
      irreversible: ['the email is delivered and cannot be recalled'],
    },
  });
  const refund = approvalRequest({
    requested_at: Date.now(),
    environment: 'staging',
    tool: 'commit_refund.v1',
    target: { type: 'order', id: 'O-5531', version: 3 },
    effect: 'Refund order O-5531 in full',
    diff: {
      changes: [{ field: 'refund_state', before: '"none"', after: '"refunded"' }],
      recipients: [],
      amount: { minor: 125_000, currency: 'EUR' },
      affected_records: 1,
      irreversible: [],
    },
  });

  beforeAll(async () => {
    h = await startApprovalHarness('console', { identity: await stackIdentity(), tokens: false });
    for (const request of [addressChange, email, refund]) await h.submit(request);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
  });
  afterAll(async () => {
    // A setup that failed half-way (no browser, no harness) must report its own error, not this one.
    await browser?.close();
    await (h as ApprovalHarness | undefined)?.stop();
  });

  const item = (proposalId: string) => page.locator(`.item[data-id="${proposalId}"]`);

  const listedIds = async (): Promise<(string | null)[]> => {
    const items = await page.locator('.item').all();
    return Promise.all(items.map((node) => node.getAttribute('data-id')));
  };

  /** An attribute of the element that has keyboard focus (evaluated in the page, which has the DOM). */
  const focusedAttribute = (name: string): Promise<unknown> =>
    page.evaluate(`document.activeElement && document.activeElement.getAttribute(${JSON.stringify(name)})`);

  /** Presses Tab until the element with `id` has focus (bounded), as a keyboard user would. */
  async function tabTo(id: string): Promise<void> {
    for (let i = 0; i < 30; i += 1) {
      if ((await focusedAttribute('id')) === id) return;
      await page.keyboard.press('Tab');
    }
    throw new Error(`could not reach #${id} with Tab`);
  }

  it('signs in at the identity provider’s own login page, shows the concrete diff of a pending address change, and approves it with the keyboard', async () => {
    await page.goto(h.url());
    // No token box: the console offers the company's sign-in only (the demo switch is off).
    expect(await page.locator('#sign-in-form').isHidden()).toBe(true);
    await page.getByRole('link', { name: 'Sign in with your company account' }).click();
    await page.waitForURL((url) => url.href.startsWith(`${ISSUER}/protocol/openid-connect/auth`));
    await page.locator('#username').fill(PEOPLE.lead.username);
    await page.locator('#password').fill(PEOPLE.lead.password);
    await page.locator('#kc-login').click();
    await item(addressChange.proposal_id).waitFor();
    expect(await page.locator('#who-name').textContent()).toBe(PEOPLE.lead.name);
    expect(await page.locator('#who-name').getAttribute('title')).toBe(`${PEOPLE.lead.username} · ${ISSUER}`);
    // The session is an HttpOnly cookie: nothing in the page can read it.
    expect(await page.evaluate('document.cookie')).toBe('');
    // Newest first: the refund, the email, then the address change.
    expect(await listedIds()).toEqual([refund.proposal_id, email.proposal_id, addressChange.proposal_id]);

    // j moves down the list; Enter opens the focused proposal.
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    expect(await focusedAttribute('data-id')).toBe(addressChange.proposal_id);
    await page.keyboard.press('Enter');
    await page.locator('#detail-title', { hasText: 'C-1842' }).waitFor();

    const detail = page.locator('#detail');
    const before = detail.locator('td.before');
    const after = detail.locator('td.after');
    expect(await before.textContent()).toContain('"line1": "1 Old Road"');
    expect(await after.textContent()).toContain('"line1": "2 New Street"');
    expect(await after.textContent()).toContain('"city": "York"');
    expect(await detail.locator('.env.prod').textContent()).toBe('PRODUCTION');
    expect(await detail.locator('.warning').textContent()).toContain('a confirmation email is sent to the customer');
    expect(await detail.textContent()).toContain(addressChange.arguments_sha256);
    expect(await detail.textContent()).toContain('support-lead');
    expect(await detail.locator('.left').textContent()).toMatch(/^\d+:\d{2} left$/);

    mkdirSync('test-artifacts', { recursive: true });
    await page.screenshot({ path: 'test-artifacts/approval-console.png' });

    await tabTo('approve');
    await page.keyboard.press('Enter');
    await item(addressChange.proposal_id).waitFor({ state: 'detached' });
    expect(await page.locator('#status').textContent()).toContain(`Approved ${addressChange.proposal_id}`);

    const order = await h.events.waitFor('execute', (o) => o.proposal_id === addressChange.proposal_id, 'the order from the console');
    expect(order.approval?.approved_by).toBe('lead@acme.example');
    expect(order.arguments).toBe(addressChange.arguments);
    const { rows } = await h.db.query<{ decider: { issuer: string; subject: string; name: string; auth_time: number } }>(
      `SELECT decider FROM ${h.t.requests} WHERE proposal_id = $1`,
      [addressChange.proposal_id],
    );
    expect(rows[0]?.decider).toMatchObject({ issuer: ISSUER, subject: PEOPLE.lead.subject, name: PEOPLE.lead.name });
    expect(rows[0]?.decider.auth_time).toBeGreaterThan(Date.now() - 600_000);
  });

  it('renders agent-written text as text, never as markup', async () => {
    await item(email.proposal_id).click();
    const title = page.locator('#detail-title');
    await title.waitFor();
    expect(await title.textContent()).toContain('<script>alert(1)</script>');
    expect(await page.locator('#detail script').count()).toBe(0);
    expect(await page.locator('#detail').textContent()).toContain('jo.doe@globex.example');
  });

  it('formats money from minor units and rejects with a reason typed at the keyboard', async () => {
    await item(refund.proposal_id).focus();
    await page.keyboard.press('Space');
    await page.locator('#detail-title', { hasText: 'O-5531' }).waitFor();
    expect(await page.locator('#detail').textContent()).toMatch(/€1,250\.00|1[.,\s]?250[.,]00\s?€/);

    await tabTo('reject');
    await page.keyboard.press('Enter');
    expect(await page.locator('#reject-error').textContent()).toContain('Say why');

    await tabTo('reason');
    await page.keyboard.type('Refund already issued by bank transfer');
    await tabTo('reject');
    await page.keyboard.press('Enter');
    await item(refund.proposal_id).waitFor({ state: 'detached' });

    const result = await h.events.waitFor('results', (r) => r.command_id === refund.command_id, 'the rejection from the console');
    expect(result.error?.code).toBe('APPROVAL_REJECTED');
    expect(result.error?.message).toContain('Refund already issued by bank transfer');
  });

  it('sends an approver who signed in too long ago back to the IdP before a high-risk approval, then waits for Approve again', async () => {
    const risky = approvalRequest({
      recent_sign_in_s: 4,
      effect: 'Replace the shipping address of customer C-2001 (high risk)',
      target: { type: 'customer', id: 'C-2001', version: 3 },
    });
    await h.submit(risky);
    const { rows: before } = await h.db.query<{ decider: { auth_time: number } }>(
      `SELECT decider FROM ${h.t.requests} WHERE proposal_id = $1`,
      [addressChange.proposal_id],
    );
    const firstSignIn = before[0]?.decider.auth_time ?? 0;
    // The sign-in of the first test grows older than the rule allows; the API says when it has.
    await pollUntil(
      async () => {
        const detail = (await (await page.request.get(`${h.url()}/api/approvals/${risky.proposal_id}`)).json()) as {
          sign_in_again: boolean;
        };
        return detail.sign_in_again ? true : undefined;
      },
      20_000,
      'the sign-in to be older than the rule allows',
    );
    await page.goto(h.url());
    await item(risky.proposal_id).click();
    await page.locator('#detail-title', { hasText: 'C-2001' }).waitFor();
    expect(await page.locator('#detail').textContent()).toContain('approving takes you to sign in again first');
    await page.locator('#approve').click();
    // Keycloak asks for the password again (max_age); back in the console the proposal is shown again,
    // and nothing is approved until the person presses Approve once more.
    await page.waitForURL((url) => url.href.startsWith(`${ISSUER}/`));
    await page.locator('#password').fill(PEOPLE.lead.password);
    await page.locator('#kc-login').click();
    await page.locator('#status', { hasText: 'You signed in again' }).waitFor();
    expect(await page.locator('#status').textContent()).toContain('press Approve again');
    expect(await page.locator('#detail-title').textContent()).toContain('C-2001');
    const { rows: returned } = await h.db.query<{ state: string }>(`SELECT state FROM ${h.t.requests} WHERE proposal_id = $1`, [
      risky.proposal_id,
    ]);
    expect(returned).toEqual([{ state: 'pending' }]);
    expect(await page.locator('#detail').textContent()).not.toContain('approving takes you to sign in again first');
    await page.locator('#approve').click();
    const order = await h.events.waitFor('execute', (o) => o.proposal_id === risky.proposal_id, 'the order of the stepped-up approval');
    expect(order.approval?.approved_by).toBe(PEOPLE.lead.username);
    const { rows } = await h.db.query<{ decider: { auth_time: number } }>(`SELECT decider FROM ${h.t.requests} WHERE proposal_id = $1`, [
      risky.proposal_id,
    ]);
    expect(rows[0]?.decider.auth_time).toBeGreaterThan(firstSignIn);
  });

  it('signs out here and at the identity provider, and comes back signed out', async () => {
    await page.locator('#sign-out').click();
    await page.waitForURL((url) => url.href.startsWith(h.url()) && !url.href.includes('/auth/'));
    await page.getByRole('link', { name: 'Sign in with your company account' }).waitFor();
    expect((await page.request.get(`${h.url()}/api/me`)).status()).toBe(401);
    // Signed out at the IdP too: signing in again asks for the password.
    await page.getByRole('link', { name: 'Sign in with your company account' }).click();
    await page.locator('#password').waitFor();
  });
});
