// Surface: a console session, after the IdP has dropped its person (docs/threat-model.md, "A13"),
// and what console sign-ins leave in Redis ("S1"). The attackers: a person their company has just
// taken out of every approver group, disabled or signed out at the IdP, who still holds an 8-hour
// console session; and anyone who can read the approval service's keys in Redis. The promises: the
// IdP is asked again before every decision, so a person it dropped decides nothing more and loses
// the session; and nothing Redis holds for a session or a sign-in under way works as a cookie, a
// token or a PKCE verifier; and whoever can also write those keys cannot make up a session, moving
// one from its cookie or signing one with any key but the approval service's.
import { createCipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalRequest, startApprovalHarness } from '../support/approval.js';
import type { ApprovalHarness } from '../support/approval.js';
import { ConsoleBrowser } from '../support/console-browser.js';
import { decideAs } from '../support/decide.js';
import { signInAtLoginPage, stackIdentity } from '../support/identity.js';
import type { SignedIn } from '../support/identity.js';
import { canonicalJson } from '@gatehouse/contracts';
import { EventSigner } from '@gatehouse/events';
import { TEST_SIGNING_KEYS } from '../support/signing.js';
import { addDisposablePerson } from '../support/test-realm.js';
import type { DisposablePerson } from '../support/test-realm.js';

interface ErrorBody {
  readonly error: { readonly code: string };
}

describe('a person the IdP has dropped, who still holds a console session', () => {
  let h: ApprovalHarness;
  const people: DisposablePerson[] = [];

  beforeAll(async () => {
    h = await startApprovalHarness('approver-sessions', { identity: await stackIdentity(), tokens: false });
  });
  afterAll(async () => {
    for (const person of people) await person.remove();
    await (h as ApprovalHarness | undefined)?.stop();
  });

  /** A new support lead of acme, signed in to the console, who has just approved one request there. */
  const leadWhoDecided = async (): Promise<{ readonly person: DisposablePerson; readonly session: SignedIn }> => {
    const person = await addDisposablePerson(['/support-leads'], ['acme']);
    people.push(person);
    const step = await signInAtLoginPage(h.url(), person);
    if (!step.ok) throw new Error(`${person.username} was refused: ${step.location}`);
    const first = approvalRequest();
    await h.submit(first);
    const approved = await decideAs(h.url(), first.proposal_id, 'approve', step.signedIn);
    expect(approved.status).toBe(200);
    return { person, session: step.signedIn };
  };

  const stateOf = async (proposalId: string): Promise<string | undefined> =>
    (await h.db.query<{ state: string }>(`SELECT state FROM ${h.t.requests} WHERE proposal_id = $1`, [proposalId])).rows[0]?.state;

  /** What the attacker's session gets: a decision on a fresh request, then a read with the same cookie. */
  const decideAfterwards = async (session: SignedIn): Promise<{ readonly outcome: unknown[]; readonly proposalId: string }> => {
    const request = approvalRequest();
    await h.submit(request);
    const decided = await decideAs<ErrorBody>(h.url(), request.proposal_id, 'approve', session);
    const read = await h.callAs<ErrorBody>('GET', '/api/me', session);
    return { outcome: [decided.status, decided.body.error?.code, read.status, read.body.error?.code], proposalId: request.proposal_id };
  };

  it.each([
    ['taken out of every approver group', [403, 'NOT_AN_APPROVER'], (person: DisposablePerson) => person.leaveGroups()],
    ['disabled at the IdP', [401, 'SESSION_EXPIRED'], (person: DisposablePerson) => person.disable()],
    [
      'signed out everywhere by an administrator of the IdP',
      [401, 'SESSION_EXPIRED'],
      (person: DisposablePerson) => person.signOutEverywhere(),
    ],
  ] as const)('%s: the next decision is refused as %j, the session is gone, the request stays pending', async (_how, refusal, drop) => {
    const { person, session } = await leadWhoDecided();
    await drop(person);

    const { outcome, proposalId } = await decideAfterwards(session);

    expect(outcome).toEqual([...refusal, 401, 'SESSION_INVALID']);
    expect(await stateOf(proposalId)).toBe('pending');
  });
});

describe('an attacker who reads every key the approval service keeps in Redis', () => {
  let h: ApprovalHarness;
  const people: DisposablePerson[] = [];

  beforeAll(async () => {
    h = await startApprovalHarness('approver-sessions-redis', { identity: await stackIdentity(), tokens: false });
  });
  afterAll(async () => {
    for (const person of people) await person.remove();
    await (h as ApprovalHarness | undefined)?.stop();
  });

  /** Every key under the service's prefix, with its string value (sessions and sign-ins are strings). */
  const readEverything = async (): Promise<Map<string, string>> => {
    const seen = new Map<string, string>();
    let cursor = '0';
    do {
      const [next, keys] = await h.redis.scan(cursor, 'MATCH', `${h.redisPrefix}*`, 'COUNT', 1000);
      for (const key of keys) if ((await h.redis.type(key)) === 'string') seen.set(key, (await h.redis.get(key)) ?? '');
      cursor = next;
    } while (cursor !== '0');
    return seen;
  };

  it('finds a signed-in session and a sign-in under way only sealed: no JWT, no JSON, no claim; neither key nor value works as the cookie', async () => {
    const person = await addDisposablePerson(['/support-leads'], ['acme']);
    people.push(person);
    const signedIn = await signInAtLoginPage(h.url(), person);
    if (!signedIn.ok) throw new Error(`${person.username} was refused: ${signedIn.location}`);
    // A second sign-in, stopped where the IdP sends the browser back: its record waits in Redis.
    await new ConsoleBrowser().startSignIn(h.url(), person);

    const stored = [...(await readEverything()).entries()].filter(([key]) => /session|sign-?in/i.test(key));

    expect(stored.length).toBeGreaterThanOrEqual(2);
    for (const [, value] of stored) {
      expect(value).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
      expect(value).not.toMatch(/eyJ|[{}]|support-lead|acme|@/);
    }
    const asCookies = await Promise.all(
      stored
        .flatMap(([key, value]) => [key.split(':').pop() ?? key, value])
        .map(async (candidate) => {
          const me = await h.callAs<ErrorBody>('GET', '/api/me', { cookie: `gatehouse_session=${candidate}` });
          return me.status;
        }),
    );
    expect(asCookies.every((status) => status === 401)).toBe(true);
    expect((await h.callAs('GET', '/api/me', signedIn.signedIn)).status).toBe(200);
  });
  /**
   * What an attacker who read this project's source writes for a cookie value of their own: a
   * session of a support lead of every tenant, sealed exactly as the service seals (the key comes
   * from the cookie they chose), signed by `signer` or not at all.
   */
  const forgedSession = (cookie: string, signer: EventSigner | undefined): string => {
    const idSha256 = createHash('sha256').update(cookie, 'utf8').digest('hex');
    const now = Date.now();
    const session = {
      approver: {
        identity: 'forger@acme.example',
        issuer: 'https://idp.example',
        subject: 'forger',
        name: 'Forger',
        authTime: now,
        roles: ['support-lead', 'ops-admin'],
        tenants: ['acme', 'globex'],
        demo: false,
      },
      csrf: randomBytes(32).toString('base64url'),
      idToken: 'x',
      refreshToken: null,
      accessExpiresAt: now + 3_600_000,
      createdAt: now,
      expiresAt: now + 3_600_000,
    };
    const payload = Buffer.from(`gatehouse.approver-session.v1\n${canonicalJson({ id_sha256: idSha256, session })}`, 'utf8');
    const plain = JSON.stringify({ session, signature: signer === undefined ? {} : signer.headersOver(payload) });
    const key = Buffer.from(hkdfSync('sha256', Buffer.from(cookie, 'utf8'), Buffer.alloc(0), 'gatehouse approver session', 32));
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `v1.${iv.toString('base64url')}.${sealed.toString('base64url')}`;
  };

  it.each([
    ['unsigned', undefined],
    ['signed with the policy service’s key', new EventSigner(TEST_SIGNING_KEYS.policy)],
    ['signed with the executor’s key', new EventSigner(TEST_SIGNING_KEYS.executor)],
  ] as const)('writes a made-up session for a cookie of its own, %s: it is SESSION_INVALID', async (_how, signer) => {
    const cookie = randomBytes(32).toString('base64url');
    const idSha256 = createHash('sha256').update(cookie, 'utf8').digest('hex');
    await h.redis.set(`${h.redisPrefix}approver-session:${idSha256}`, forgedSession(cookie, signer), 'PX', 60_000);

    const me = await h.callAs<ErrorBody>('GET', '/api/me', { cookie: `gatehouse_session=${cookie}` });

    expect([me.status, me.body.error?.code]).toEqual([401, 'SESSION_INVALID']);
  });

  it('copies a real session’s record under a cookie of its own: it opens for no other cookie', async () => {
    const person = await addDisposablePerson(['/support-leads'], ['acme']);
    people.push(person);
    const signedIn = await signInAtLoginPage(h.url(), person);
    if (!signedIn.ok) throw new Error(`${person.username} was refused: ${signedIn.location}`);
    const real = signedIn.signedIn.cookie.split('=')[1] ?? '';
    const sha = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
    const record = await h.redis.get(`${h.redisPrefix}approver-session:${sha(real)}`);
    expect(record).not.toBeNull();
    const cookie = randomBytes(32).toString('base64url');

    await h.redis.set(`${h.redisPrefix}approver-session:${sha(cookie)}`, record ?? '', 'PX', 60_000);

    const me = await h.callAs<ErrorBody>('GET', '/api/me', { cookie: `gatehouse_session=${cookie}` });
    expect([me.status, me.body.error?.code]).toEqual([401, 'SESSION_INVALID']);
    expect((await h.callAs('GET', '/api/me', signedIn.signedIn)).status).toBe(200);
  });
});
