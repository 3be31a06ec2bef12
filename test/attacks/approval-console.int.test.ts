// Surface: the approval console (docs/threat-model.md, A5–A8): its page, its links and hash
// navigation, framing, and the decision routes on a console session. The attacker: an agent's
// operator who holds exactly the proposal id of their own pending request (so they know its
// arguments, hash and target version too) and a web page of their own on loopback, which a
// signed-in approver visits. The promise: nothing but the approver's own press of Approve on the
// rendered proposal decides it: no page load, link, hash, sign-in return, frame or cross-site form,
// and a decision on another version than the one shown is refused.
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalRequest, startApprovalHarness } from '../support/approval.js';
import type { ApprovalHarness } from '../support/approval.js';
import { ISSUER, PEOPLE, stackIdentity } from '../support/identity.js';

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

interface ErrorBody {
  readonly error: { readonly code: string; readonly message: string };
}

/** The attacker's pages, by path: plain HTML with inline script, served as any web site would. */
function hostilePages(console: string, proposalId: string, shown: { arguments_sha256: string; target_version: number | null }) {
  const page = (body: string) => `<!doctype html><html><head><title>Totally a cat picture</title></head><body>${body}</body></html>`;
  const go = (to: string) => page(`<script>window.top.location.assign(${JSON.stringify(to)});</script>`);
  // enctype text/plain turns name=value into a JSON body: the decision exactly as the console would send it.
  const json = JSON.stringify({ ...shown, pad: '' }).slice(0, -2);
  return new Map<string, string>([
    ['/approve-link', go(`${console}/#approve=${proposalId}`)],
    ['/proposal-link', go(`${console}/#proposal=${proposalId}`)],
    ['/sign-in-link', go(`${console}/login?return=${encodeURIComponent(`/#approve=${proposalId}`)}`)],
    ['/frame', page(`<iframe id="console" width="800" height="600" src="${console}/#proposal=${proposalId}"></iframe>`)],
    [
      '/form',
      page(
        `<form method="POST" enctype="text/plain" action="${console}/api/approvals/${proposalId}/approve">` +
          `<input type="hidden" name='${json}' value='"}'></form><script>document.forms[0].submit();</script>`,
      ),
    ],
  ]);
}

describe('an attacker holding the id of their own pending proposal and a web page the approver visits', () => {
  let h: ApprovalHarness;
  let browser: Browser | undefined;
  let page: Page;
  let hostile: Server | undefined;
  let attacker = '';
  /** Every decision the approver's browser sent, from any page or frame (`POST <url>`). */
  const decisionsSent: string[] = [];
  /** Every request for the console's own script or API made from inside a frame. */
  const framedConsoleRequests: string[] = [];

  const request = approvalRequest({ effect: 'Replace the shipping address of customer C-1842 (asked for by the attacker’s agent)' });
  const shown = { arguments_sha256: request.arguments_sha256, target_version: request.target.version };

  beforeAll(async () => {
    h = await startApprovalHarness('console-attack', { identity: await stackIdentity(), tokens: false });
    await h.submit(request);
    const pages = hostilePages(h.url(), request.proposal_id, shown);
    hostile = createServer((req, res) => {
      const html = pages.get(req.url ?? '');
      res.writeHead(html === undefined ? 404 : 200, { 'content-type': 'text/html; charset=utf-8' }).end(html ?? 'not here');
    });
    await new Promise<void>((resolve) => hostile?.listen(0, '127.0.0.1', resolve));
    attacker = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
    context.on('request', (sent) => {
      const url = sent.url();
      if (sent.method() === 'POST' && url.startsWith(`${h.url()}/api/approvals/`)) decisionsSent.push(`POST ${url}`);
      const framed = sent.frame().parentFrame() !== null;
      if (framed && (url.startsWith(`${h.url()}/api/`) || url === `${h.url()}/console.js`)) framedConsoleRequests.push(url);
    });
    page = await context.newPage();

    // The approver signs in to the console as on any working day.
    await page.goto(h.url());
    await page.getByRole('link', { name: 'Sign in with your company account' }).click();
    await page.waitForURL((url) => url.href.startsWith(`${ISSUER}/protocol/openid-connect/auth`));
    await page.locator('#username').fill(PEOPLE.lead.username);
    await page.locator('#password').fill(PEOPLE.lead.password);
    await page.locator('#kc-login').click();
    await page.locator(`.item[data-id="${request.proposal_id}"]`).waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => (hostile === undefined ? resolve(undefined) : hostile.close(resolve)));
    await (h as ApprovalHarness | undefined)?.stop();
  });

  /** The request as stored, and as the API shows it: still pending, undecided and unpublished. */
  async function expectStillPending(): Promise<void> {
    const { rows } = await h.db.query<{ state: string; decision_id: string | null; decided_by: string | null; published: boolean }>(
      `SELECT state, decision_id, decided_by, published_at IS NOT NULL AS published FROM ${h.t.requests} WHERE proposal_id = $1`,
      [request.proposal_id],
    );
    expect(rows).toEqual([{ state: 'pending', decision_id: null, decided_by: null, published: false }]);
    const viaApi = await page.request.get(`${h.url()}/api/approvals/${request.proposal_id}`);
    expect(((await viaApi.json()) as { state: string }).state).toBe('pending');
    expect(h.events.seen.approvalsDecided.filter((d) => d.proposal_id === request.proposal_id)).toEqual([]);
    expect(h.events.seen.execute.filter((o) => o.proposal_id === request.proposal_id)).toEqual([]);
  }

  /** Lands the approver's browser on the attacker's page, then waits until the console it sent them to has settled. */
  async function visit(path: string): Promise<void> {
    // The page sends the browser on before it has loaded: wait only for it to arrive.
    await page.goto(`${attacker}${path}`, { waitUntil: 'commit' });
    await page.waitForURL((url) => url.href.startsWith(`${h.url()}/`) && !url.href.includes('/login') && !url.href.includes('/auth/'));
    // The console marks its page once its load has run to the end, whatever it did.
    await page.locator('body[data-booted="true"]').waitFor({ state: 'attached' });
  }

  it('decides nothing when its page navigates the approver to the console with #approve=<id>', async () => {
    await visit('/approve-link');
    expect(page.url()).toBe(`${h.url()}/`);
    expect(decisionsSent).toEqual([]);
    await expectStillPending();
  });

  it('decides nothing when its link sends the approver through sign-in at the IdP and back to #approve=<id>', async () => {
    const signedInAgain = page.waitForResponse((r) => r.url().startsWith(`${h.url()}/auth/callback`));
    await visit('/sign-in-link');
    // The IdP still knew the person: the sign-in completed without a prompt, as the attacker hoped.
    expect((await signedInAgain).status()).toBe(303);
    expect(page.url()).toBe(`${h.url()}/`);
    expect(decisionsSent).toEqual([]);
    await expectStillPending();
  });

  it('can only open and show the proposal with #proposal=<id>, leaving the decision to the approver', async () => {
    await visit('/proposal-link');
    await page.locator('#detail-title', { hasText: 'asked for by the attacker' }).waitFor();
    expect(await page.locator('#detail').textContent()).toContain(request.arguments_sha256);
    expect(await page.locator('#approve').isEnabled()).toBe(true);
    // No announcement invites a second press: this person never pressed Approve.
    expect(await page.locator('#status').textContent()).not.toContain('signed in again');
    expect(decisionsSent).toEqual([]);
    await expectStillPending();
  });

  it('cannot frame the console: the browser refuses to render it inside the attacker’s page', async () => {
    const framedDocument = page.waitForResponse((r) => r.url().startsWith(`${h.url()}/`) && r.request().frame().parentFrame() !== null);
    await page.goto(`${attacker}/frame`);
    const response = await framedDocument;
    expect(response.headers()['x-frame-options']).toBe('DENY');
    expect(response.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    // The attacker's page has loaded once its frame has, refused or not.
    await page.waitForLoadState('load');
    // The console's script never ran in the frame: it loaded nothing and asked the API nothing.
    expect(framedConsoleRequests).toEqual([]);
    const frame = page.frames().find((f) => f.parentFrame() !== null);
    expect(frame?.url()).not.toContain('#proposal=');
    expect(decisionsSent).toEqual([]);
    await expectStillPending();
  });

  it('cannot approve with a form its page auto-submits to the approve route, even with the right hash and version', async () => {
    const answered = page.waitForResponse((r) => r.url() === `${h.url()}/api/approvals/${request.proposal_id}/approve`);
    await page.goto(`${attacker}/form`, { waitUntil: 'commit' });
    const response = await answered;
    // The session cookie may travel (loopback is one site); the CSRF token it needs cannot.
    expect([401, 403]).toContain(response.status());
    expect(((await response.json()) as ErrorBody).error.code).toMatch(/^(CSRF_TOKEN_INVALID|UNAUTHORIZED)$/);
    expect(decisionsSent).toEqual([`POST ${h.url()}/api/approvals/${request.proposal_id}/approve`]);
    await expectStillPending();
  });

  it('refuses a decision carrying a stale arguments_sha256 or target version with 409 PROPOSAL_MISMATCH', async () => {
    await page.goto(h.url());
    await page.locator('#who-name').waitFor();
    const me = (await (await page.request.get(`${h.url()}/api/me`)).json()) as { csrf_token: string };
    const decide = (path: 'approve' | 'reject', data: Record<string, unknown>) =>
      page.request.post(`${h.url()}/api/approvals/${request.proposal_id}/${path}`, { headers: { 'x-csrf-token': me.csrf_token }, data });
    const stale = [
      await decide('approve', { ...shown, arguments_sha256: 'f'.repeat(64) }),
      await decide('approve', { ...shown, target_version: 16 }),
      await decide('approve', { ...shown, target_version: null }),
      await decide('reject', { ...shown, arguments_sha256: 'f'.repeat(64), reason: 'stale' }),
    ];
    const answers = await Promise.all(stale.map(async (r) => [r.status(), ((await r.json()) as ErrorBody).error.code]));
    expect(answers).toEqual(Array(4).fill([409, 'PROPOSAL_MISMATCH']));
    // Without what was shown, a decision is not even read.
    const bare = await decide('approve', {});
    expect([bare.status(), ((await bare.json()) as ErrorBody).error.code]).toEqual([400, 'INVALID_REQUEST']);
    await expectStillPending();
  });

  it('decides nothing on a script’s click of Approve, only on the person’s own', async () => {
    await page.locator(`.item[data-id="${request.proposal_id}"]`).click();
    await page.locator('#detail-title', { hasText: 'asked for by the attacker' }).waitFor();
    const before = decisionsSent.length;
    await page.locator('#approve').dispatchEvent('click');
    // A handler that decided would have sent its request within the click (fetch starts synchronously);
    // one round trip to the page later, every request it made has been reported.
    await page.evaluate('document.readyState');
    expect(decisionsSent).toHaveLength(before);
    await expectStillPending();
  });

  it('approves when the approver presses Approve on the shown proposal: one decision, one order', async () => {
    await page.locator('#approve').click();
    await page.locator(`.item[data-id="${request.proposal_id}"]`).waitFor({ state: 'detached' });
    expect(await page.locator('#status').textContent()).toContain(`Approved ${request.proposal_id}`);
    const order = await h.events.waitFor('execute', (o) => o.proposal_id === request.proposal_id, 'the order of the real approval');
    expect(order.approval?.approved_by).toBe(PEOPLE.lead.username);
    expect(order.arguments_sha256).toBe(request.arguments_sha256);
    const decision = await h.events.waitFor('approvalsDecided', (d) => d.proposal_id === request.proposal_id, 'the decision');
    // Every earlier decision would sit before this one on the tenant's partition: there was none.
    expect(h.events.seen.approvalsDecided.filter((d) => d.proposal_id === request.proposal_id)).toEqual([decision]);
    expect(h.events.seen.execute.filter((o) => o.proposal_id === request.proposal_id)).toEqual([order]);
    const { rows } = await h.db.query<{ state: string; decided_by: string }>(
      `SELECT state, decided_by FROM ${h.t.requests} WHERE proposal_id = $1`,
      [request.proposal_id],
    );
    expect(rows).toEqual([{ state: 'approved', decided_by: PEOPLE.lead.username }]);
  });
});
