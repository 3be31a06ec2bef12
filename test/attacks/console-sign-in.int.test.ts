// Surface: the console's browser sign-in (/login and /auth/callback, OpenID Connect at the stack's
// Keycloak). The attacker: an outsider with an account of their own at the IdP (an approver or
// not) and the ability to make the victim's browser load a URL of their choosing. The promise: a
// sign-in finishes only in the browser that started it, so the attacker can neither put the
// victim's console under the attacker's account nor end the victim's session or pending sign-in
// (login CSRF); and a sign-in only ever returns the browser to the console's own origin (no open
// redirect).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApprovalHarness } from '../support/approval.js';
import type { ApprovalHarness } from '../support/approval.js';
import { ConsoleBrowser, locationOf } from '../support/console-browser.js';
import { PEOPLE, stackIdentity } from '../support/identity.js';
import type { Person } from '../support/identity.js';

const REFUSED = '/#sign-in-error=SIGN_IN_FAILED';
const SESSION = 'gatehouse_session';

/** The unit table's hostile return paths (services/approval/test/sign-in-return.test.ts) that /login takes (≤ 500 characters). */
const HOSTILE_RETURNS = [
  '//evil.example/x',
  '/\t/evil.example/x',
  '/\n/evil.example/x',
  '/\r/evil.example/x',
  '/\u0000/evil.example',
  '/\u007f/evil.example',
  '\\\\evil.example/x',
  '/\\evil.example/x',
  'https://evil.example/x',
  'http:evil.example',
  'https:evil.example',
  'javascript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  '/.//evil.example/x',
  '/%2e//evil.example/x',
  '/x/..//evil.example/x',
  '///evil.example/x',
  '/%09/evil.example/x',
  ' /x',
  `//evil.example/${'a'.repeat(400)}`,
];
const GOOD_RETURNS = ['/', '/#proposal=p_1', '/?a=b#x'];

describe('an outsider with an IdP account of their own, who can make the victim’s browser load a URL', () => {
  let h: ApprovalHarness;

  beforeAll(async () => {
    h = await startApprovalHarness('console-sign-in', { identity: await stackIdentity(), tokens: false });
  });
  afterAll(async () => {
    await (h as ApprovalHarness | undefined)?.stop();
  });

  /** Who the console says a browser is signed in as, or the HTTP status it refused with. */
  const whoIs = async (browser: ConsoleBrowser): Promise<string | number> => {
    const me = await browser.open(`${h.url()}/api/me`);
    return me.status === 200 ? String(((await me.json()) as { identity: string }).identity) : me.status;
  };

  /** A browser signed in to the console as `person`, as on any working day. */
  const signedIn = async (person: Person): Promise<ConsoleBrowser> => {
    const browser = new ConsoleBrowser();
    expect(await browser.signIn(h.url(), person)).toBe('/');
    expect(await whoIs(browser)).toBe(person.username);
    return browser;
  };

  it('refuses the attacker’s callback in the victim’s signed-in browser, sets no cookie, and leaves the victim signed in as themselves', async () => {
    const victim = await signedIn(PEOPLE.lead);
    const victimSession = victim.cookie(h.url(), SESSION);
    const callback = await new ConsoleBrowser().startSignIn(h.url(), PEOPLE.ops);

    const loaded = await victim.open(callback);

    expect([loaded.status, loaded.headers.get('location'), loaded.headers.getSetCookie()]).toEqual([303, REFUSED, []]);
    expect(victim.cookie(h.url(), SESSION)).toBe(victimSession);
    expect(await whoIs(victim)).toBe(PEOPLE.lead.username);
  });

  it('still signs the attacker in, in their own browser, with the very callback the victim’s browser was refused', async () => {
    const attacker = new ConsoleBrowser();
    const callback = await attacker.startSignIn(h.url(), PEOPLE.ops);
    const victim = new ConsoleBrowser();
    expect(locationOf(await victim.open(callback), 'the callback')).toBe(REFUSED);

    const own = await attacker.open(callback);

    expect([own.status, own.headers.get('location')]).toEqual([303, '/']);
    expect(attacker.cookie(h.url(), SESSION)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await whoIs(attacker)).toBe(PEOPLE.ops.username);
    expect(await whoIs(victim)).toBe(401);
  });

  it('leaves a sign-in under way in the victim’s browser intact when it is made to load the attacker’s callback', async () => {
    const victim = new ConsoleBrowser();
    const victimCallback = await victim.startSignIn(h.url(), PEOPLE.lead);
    const attackerCallback = await new ConsoleBrowser().startSignIn(h.url(), PEOPLE.ops);

    const loaded = await victim.open(attackerCallback);
    expect([loaded.status, loaded.headers.get('location'), loaded.headers.getSetCookie()]).toEqual([303, REFUSED, []]);

    expect(locationOf(await victim.open(victimCallback), 'the callback')).toBe('/');
    expect(await whoIs(victim)).toBe(PEOPLE.lead.username);
  });

  it('refuses a non-approver attacker’s callback in the victim’s browser for the browser alone, before the code is redeemed', async () => {
    const victim = await signedIn(PEOPLE.lead);
    const attacker = new ConsoleBrowser();
    const callback = await attacker.startSignIn(h.url(), PEOPLE.viewer);

    // SIGN_IN_FAILED, not the policy's NOT_AN_APPROVER: the ID token was never fetched to be mapped.
    expect(locationOf(await victim.open(callback), 'the callback')).toBe(REFUSED);
    expect(await whoIs(victim)).toBe(PEOPLE.lead.username);
    // The code was still unredeemed: the attacker's own browser gets it mapped, and refused by the policy.
    expect(locationOf(await attacker.open(callback), 'the callback')).toBe('/#sign-in-error=NOT_AN_APPROVER');
  });

  it.each(HOSTILE_RETURNS)(
    'returns the browser to the console’s own origin after a real sign-in asked to return to %j',
    async (hostile) => {
      const location = await new ConsoleBrowser().signIn(h.url(), PEOPLE.lead, `?return=${encodeURIComponent(hostile)}`);
      expect(location.startsWith('/') && !location.startsWith('//'), location).toBe(true);
      expect(new URL(location, h.url()).origin).toBe(new URL(h.url()).origin);
    },
  );

  it.each(GOOD_RETURNS)('returns the browser to the console path %j it asked for after a real sign-in', async (path) => {
    const location = await new ConsoleBrowser().signIn(h.url(), PEOPLE.lead, `?return=${encodeURIComponent(path)}`);
    expect(location).toBe(path);
  });

  it('refuses at /login a return path longer than 500 characters, before a sign-in starts', async () => {
    const browser = new ConsoleBrowser();
    const login = await browser.open(`${h.url()}/login?return=${encodeURIComponent(`/${'a'.repeat(500)}`)}`);
    expect([login.status, login.headers.get('location'), login.headers.getSetCookie()]).toEqual([400, null, []]);
  });
});
