import { generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Decider, RequestDetail } from '@gatehouse/approval';
import { approvalRequest, startApprovalHarness } from './support/approval.js';
import type { ApprovalHarness } from './support/approval.js';
import { decideAs, shownIn } from './support/decide.js';
import { ISSUER, PEOPLE, signInAtLoginPage, stackIdentity, tokensOf } from './support/identity.js';
import type { SignedIn } from './support/identity.js';
import { pollUntil } from './support/poll.js';

interface ErrorBody {
  readonly error: { readonly code: string; readonly message: string };
}

/** Signs in at Keycloak's own login page; fails the test when the console refused the person. */
async function signIn(h: ApprovalHarness, who: (typeof PEOPLE)[keyof typeof PEOPLE]): Promise<SignedIn> {
  const step = await signInAtLoginPage(h.url(), who);
  if (!step.ok) throw new Error(`${who.username} was refused: ${step.location}`);
  return step.signedIn;
}

describe('approvers proved by the identity provider (Keycloak from the stack)', () => {
  let h: ApprovalHarness;

  beforeAll(async () => {
    // Clock tolerance 0, so a real 1-second token is refused as expired as soon as it lapses.
    h = await startApprovalHarness('idp', { identity: await stackIdentity({ clockToleranceS: 0 }), tokens: false });
  });
  afterAll(async () => {
    await h?.stop();
  });

  const storedDecider = async (proposalId: string): Promise<{ decided_by: string | null; decider: Decider | null; state: string }> => {
    const { rows } = await h.db.query<{ decided_by: string | null; decider: Decider | null; state: string }>(
      `SELECT decided_by, decider, state FROM ${h.t.requests} WHERE proposal_id = $1`,
      [proposalId],
    );
    const row = rows[0];
    if (row === undefined) throw new Error(`no request ${proposalId}`);
    return row;
  };
  const refusals = async (): Promise<string> => (await fetch(`${h.url()}/metrics`)).text();
  const counted = (metrics: string, code: string): number => {
    const line = metrics.split('\n').find((l) => l.startsWith(`gatehouse_identity_refusals_total{surface="approval",code="${code}"}`));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  };

  it('signs a person in at the IdP and records the decision under their issuer and subject, name and sign-in time', async () => {
    const request = approvalRequest();
    await h.submit(request);
    const lead = await signIn(h, PEOPLE.lead);
    expect(lead.me).toMatchObject({
      identity: PEOPLE.lead.username,
      issuer: ISSUER,
      subject: PEOPLE.lead.subject,
      name: PEOPLE.lead.name,
      roles: ['support-lead'],
      tenants: ['acme', 'globex'],
      demo: false,
    });
    expect(lead.me['auth_time']).toEqual(expect.any(Number));

    const approved = await decideAs<RequestDetail>(h.url(), request.proposal_id, 'approve', lead);
    expect(approved.status).toBe(200);
    expect(approved.body.decider).toEqual({
      issuer: ISSUER,
      subject: PEOPLE.lead.subject,
      name: PEOPLE.lead.name,
      auth_time: lead.me['auth_time'],
    });
    const stored = await storedDecider(request.proposal_id);
    expect(stored).toMatchObject({
      state: 'approved',
      decided_by: PEOPLE.lead.username,
      decider: { issuer: ISSUER, subject: PEOPLE.lead.subject },
    });
  });

  it('sets the session cookie HttpOnly and SameSite=Lax, and never hands the browser a token', async () => {
    const login = await fetch(`${h.url()}/login`, { redirect: 'manual' });
    const authorize = new URL(login.headers.get('location') ?? '');
    expect(authorize.origin + authorize.pathname).toBe(`${ISSUER}/protocol/openid-connect/auth`);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize.searchParams.get('nonce')).toEqual(expect.any(String));

    let setCookie = '';
    const original = globalThis.fetch;
    const step = await signInAtLoginPage(h.url(), PEOPLE.ops, {
      callbackHook: () => {
        globalThis.fetch = async (input, init) => {
          const response = await original(input, init);
          setCookie ||= response.headers.getSetCookie().join('\n');
          globalThis.fetch = original;
          return response;
        };
      },
    });
    globalThis.fetch = original;
    expect(step.ok).toBe(true);
    // The session's cookie, beside the line that clears the sign-in's binding cookie.
    const session = setCookie.split('\n').filter((line) => line.startsWith('gatehouse_session='));
    expect(session).toHaveLength(1);
    expect(session[0]).toMatch(/^gatehouse_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax$/);
    if (step.ok) expect(JSON.stringify(step.signedIn.me)).not.toMatch(/eyJ/);
  });

  it('refuses a decision on a session without its CSRF token, and decides nothing', async () => {
    const request = approvalRequest();
    await h.submit(request);
    const lead = await signIn(h, PEOPLE.lead);
    const before = counted(await refusals(), 'CSRF_TOKEN_INVALID');
    const bare = await h.callAs<ErrorBody>(
      'POST',
      `/api/approvals/${request.proposal_id}/approve`,
      { cookie: lead.cookie },
      shownIn(request),
    );
    // Another token of the same length: its last character changed, to one it is not.
    const altered = `${lead.csrf.slice(0, -1)}${lead.csrf.endsWith('A') ? 'B' : 'A'}`;
    const wrong = await h.callAs<ErrorBody>(
      'POST',
      `/api/approvals/${request.proposal_id}/approve`,
      { cookie: lead.cookie, csrf: altered },
      shownIn(request),
    );
    expect([bare.status, bare.body.error.code, wrong.status, wrong.body.error.code]).toEqual([
      403,
      'CSRF_TOKEN_INVALID',
      403,
      'CSRF_TOKEN_INVALID',
    ]);
    expect((await storedDecider(request.proposal_id)).state).toBe('pending');
    expect(counted(await refusals(), 'CSRF_TOKEN_INVALID')).toBe(before + 2);
  });

  it('refuses a forged session cookie and one that was signed out', async () => {
    const forged = await h.callAs<ErrorBody>('GET', '/api/me', { cookie: `gatehouse_session=${'A'.repeat(43)}` });
    expect([forged.status, forged.body.error.code]).toEqual([401, 'SESSION_INVALID']);

    const lead = await signIn(h, PEOPLE.lead);
    const noCsrf = await h.callAs<ErrorBody>('POST', '/logout', { cookie: lead.cookie });
    expect([noCsrf.status, noCsrf.body.error.code]).toEqual([403, 'CSRF_TOKEN_INVALID']);
    const out = await h.callAs<{ signed_out: boolean; end_session_url: string }>('POST', '/logout', lead);
    expect(out.status).toBe(200);
    expect(out.body.end_session_url).toContain(`${ISSUER}/protocol/openid-connect/logout?`);
    expect(new URL(out.body.end_session_url).searchParams.get('post_logout_redirect_uri')).toBe(`${h.url()}/`);
    const stale = await h.callAs<ErrorBody>('GET', '/api/me', { cookie: lead.cookie });
    expect([stale.status, stale.body.error.code]).toEqual([401, 'SESSION_INVALID']);
  });

  it('takes a sign-in callback once: a replayed code and state are refused', async () => {
    let callback = '';
    const first = await signInAtLoginPage(h.url(), PEOPLE.lead, { callbackHook: (url) => (callback = url) });
    expect(first.ok).toBe(true);
    const replay = await fetch(callback, { redirect: 'manual' });
    expect(replay.status).toBe(303);
    expect(replay.headers.get('location')).toBe('/#sign-in-error=SIGN_IN_FAILED');
    expect(replay.headers.getSetCookie()).toEqual([]);
  });

  it('refuses a person whose groups map to no approver role, at sign-in and by bearer token', async () => {
    const step = await signInAtLoginPage(h.url(), PEOPLE.viewer);
    expect(step).toEqual({ ok: false, location: '/#sign-in-error=NOT_AN_APPROVER' });
    const { access_token } = await tokensOf(PEOPLE.viewer);
    const me = await h.call<ErrorBody>('GET', '/api/me', access_token);
    expect([me.status, me.body.error.code]).toEqual([403, 'NOT_AN_APPROVER']);
  });

  it('lets an IdP access token approve, and hides another tenant’s request from an approver of one tenant', async () => {
    const acme = approvalRequest();
    await h.submit(acme);
    const globexLead = (await tokensOf(PEOPLE.globexLead)).access_token;
    const before = counted(await refusals(), 'OTHER_TENANT');
    // Knowing what the request holds does not help: another tenant's request does not exist for them.
    const hidden = await h.call<ErrorBody>('POST', `/api/approvals/${acme.proposal_id}/approve`, globexLead, shownIn(acme));
    expect([hidden.status, hidden.body.error.code]).toEqual([404, 'NOT_FOUND']);
    expect(counted(await refusals(), 'OTHER_TENANT')).toBe(before + 1);
    expect((await storedDecider(acme.proposal_id)).state).toBe('pending');

    const ops = (await tokensOf(PEOPLE.ops)).access_token;
    const approved = await decideAs<RequestDetail>(h.url(), acme.proposal_id, 'approve', ops);
    expect(approved.status).toBe(200);
    expect(approved.body.decider).toMatchObject({ issuer: ISSUER, subject: PEOPLE.ops.subject });
  });

  it('refuses tokens of another issuer, for another audience, expired, or signed by a key the IdP does not publish', async () => {
    const request = approvalRequest();
    await h.submit(request);
    const attempt = (token: string) => h.call<ErrorBody>('POST', `/api/approvals/${request.proposal_id}/approve`, token, shownIn(request));
    const { privateKey } = await generateKeyPair('RS256');
    const real = (await tokensOf(PEOPLE.lead)).access_token;
    const [header = ''] = real.split('.');
    const { kid } = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { kid: string };
    const forge = (iss: string, keyId: string) =>
      new SignJWT({ sub: PEOPLE.lead.subject, groups: ['support-leads', 'ops-admins'], tenant: ['acme'] })
        .setProtectedHeader({ alg: 'RS256', kid: keyId })
        .setIssuer(iss)
        .setAudience('gatehouse-approval')
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey);

    const otherIssuer = await attempt(await forge('http://127.0.0.1:18080/realms/evil', kid));
    // Keycloak's own key id, another key: a forgery of the real issuer.
    const forgedSignature = await attempt(await forge(ISSUER, kid));
    const unknownKey = await attempt(await forge(ISSUER, 'not-a-published-key'));
    // An ID token is meant for the client that asked for it, not for the approval API.
    const wrongAudience = await attempt((await tokensOf(PEOPLE.lead)).id_token);
    const short = (await tokensOf(PEOPLE.lead, 'gatehouse-test-short')).access_token;
    // Read-only polling until the real token lapses; then the decision is tried with it.
    await pollUntil(
      async () => ((await h.call('GET', '/api/me', short)).status === 401 ? true : undefined),
      10_000,
      'the 1-second token to lapse',
    );
    const expired = await attempt(short);

    expect({
      otherIssuer: [otherIssuer.status, otherIssuer.body.error.code],
      forgedSignature: [forgedSignature.status, forgedSignature.body.error.code],
      unknownKey: [unknownKey.status, unknownKey.body.error.code],
      wrongAudience: [wrongAudience.status, wrongAudience.body.error.code],
      expired: [expired.status, expired.body.error.code],
    }).toEqual({
      otherIssuer: [401, 'TOKEN_ISSUER_UNKNOWN'],
      forgedSignature: [401, 'TOKEN_SIGNATURE_INVALID'],
      unknownKey: [401, 'TOKEN_SIGNATURE_INVALID'],
      wrongAudience: [401, 'TOKEN_AUDIENCE_MISMATCH'],
      expired: [401, 'TOKEN_EXPIRED'],
    });
    const challenge = await fetch(`${h.url()}/api/me`, { headers: { authorization: `Bearer ${await forge(ISSUER, kid)}` } });
    expect(challenge.headers.get('www-authenticate')).toMatch(/^Bearer realm="gatehouse", error="invalid_token"/);
    expect((await storedDecider(request.proposal_id)).state).toBe('pending');
    const metrics = await refusals();
    for (const code of ['TOKEN_ISSUER_UNKNOWN', 'TOKEN_SIGNATURE_INVALID', 'TOKEN_AUDIENCE_MISMATCH', 'TOKEN_EXPIRED'])
      expect(counted(metrics, code), code).toBeGreaterThan(0);
  });
});
