// Token exchange (RFC 8693) at the stack's Keycloak: a tool whose system of record trusts only the
// company's IdP calls it with the IdP's own token for the run's person, which the executor exchanges
// from the person's token handed to the run. Through the real policy service and executor, against
// a records service that checks the IdP's tokens itself; and the exchanger alone, against Keycloak
// and Redis, for what a refresh token and an ended session do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessTokenVerifier, TokenExchanger } from '@gatehouse/identity';
import type { ExchangeStep } from '@gatehouse/identity';
import { createRedis, DelegationStore, Keyspace, redisUrlFromEnv } from '@gatehouse/state';
import type { Redis } from '@gatehouse/state';
import { CONTROL_TOKEN, startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';
import { ISSUER, PEOPLE, stackExchange, tokensOf } from './support/identity.js';
import type { Person } from './support/identity.js';
import { RECORDS, readRecordTool, registerRecordsRun, startRecordsService } from './support/records-service.js';
import type { RecordsService } from './support/records-service.js';
import { TEST_UNSEALER } from './support/signing.js';
import { testCatalog } from './support/test-catalog.js';

let recordsUrl = '';
const readRecord = readRecordTool(() => recordsUrl);

describe('a tool whose system of record trusts only the IdP', () => {
  let g: Gatehouse;
  let records: RecordsService;

  beforeAll(async () => {
    records = await startRecordsService();
    recordsUrl = records.url;
    const { catalog, implementations, roles } = testCatalog([readRecord]);
    g = await startGatehouse('exchange', { catalog, implementations, roles, exchange: true });
  });
  afterAll(async () => {
    await g?.stop();
    await records?.close();
  });

  /** Registers a run as trusted code does; the test's client holds the key of one registered, as its runtime would. */
  const register = (body: Record<string, unknown>): Promise<Response> => registerRecordsRun(g, body);
  const delegated = async (person: Person): Promise<string> =>
    (await tokensOf(person, 'gatehouse-test', 'openid gatehouse.delegation')).access_token;
  const exchangeSteps = async (): Promise<Record<string, number>> => {
    const text = await (await fetch(`${g.executors[0]?.url ?? ''}/metrics`)).text();
    return Object.fromEntries(
      [...text.matchAll(/^gatehouse_token_exchanges_total\{outcome="(\w+)"\} (\d+)/gm)].map((m) => [m[1] ?? '', Number(m[2])]),
    );
  };

  it("calls the system of record with the IdP's token for the run's person, exchanged once and then reused", async () => {
    const subjectToken = await delegated(PEOPLE.owner);
    const created = await register({ subject_token: subjectToken });
    expect(created.status).toBe(201);
    const run = (await created.json()) as { run_id: string; on_behalf_of: unknown };
    // The person's own token names them: the run acts for exactly that person.
    expect(run.on_behalf_of).toEqual({ issuer: ISSUER, subject: PEOPLE.owner.subject, name: PEOPLE.owner.name });

    const before = records.seen.length;
    for (let i = 0; i < 2; i += 1) {
      const read = await g.client.call('read_record.v1', {}, { runId: run.run_id, tenant: 'acme' });
      expect(read.ok && read.result).toEqual({ record_id: 'R-1', owner: PEOPLE.owner.subject });
    }
    const served = records.seen.slice(before);
    expect(served).toHaveLength(2);
    for (const request of served) {
      expect(request).toMatchObject({
        status: 200,
        sub: PEOPLE.owner.subject,
        aud: RECORDS.audience,
        azp: stackExchange.clientId,
        scope: RECORDS.scope,
      });
      // Never the person's own token: one for this system of record, asked for by the executors' client.
      expect(request.token).not.toBe(subjectToken);
    }
    expect(served[1]?.token).toBe(served[0]?.token);
    expect(await exchangeSteps()).toMatchObject({ exchanged: 1, cached: expect.any(Number) as number });
  });

  it('refuses a run with no token of its person before the handler runs, and sends nothing', async () => {
    const created = await register({ on_behalf_of: { issuer: ISSUER, subject: PEOPLE.owner.subject } });
    expect(created.status).toBe(201);
    const run = (await created.json()) as { run_id: string };
    const before = records.seen.length;
    const read = await g.client.call('read_record.v1', {}, { runId: run.run_id, tenant: 'acme' });
    expect(read.ok).toBe(false);
    if (read.ok) return;
    expect(read.error).toMatchObject({ code: 'CREDENTIAL_REFUSED', retryable: false });
    expect(read.error.message).toContain('no token of its person');
    expect(records.seen.length).toBe(before);
  });

  it('refuses a run whose person ended their session at the IdP, and sends nothing', async () => {
    const tokens = await tokensOf(PEOPLE.lead, 'gatehouse-test', 'openid gatehouse.delegation');
    const created = await register({ subject_token: tokens.access_token });
    const run = (await created.json()) as { run_id: string };
    await signOut(tokens.refresh_token);
    const before = records.seen.length;
    const read = await g.client.call('read_record.v1', {}, { runId: run.run_id, tenant: 'acme' });
    expect(!read.ok && read.error).toMatchObject({ code: 'CREDENTIAL_REFUSED', retryable: false });
    expect(records.seen.length).toBe(before);
    expect((await exchangeSteps())['refused']).toBeGreaterThanOrEqual(1);
  });

  it("refuses at registration a person's token that is not for the executors, forged, or of another person than on_behalf_of", async () => {
    // No gatehouse.delegation scope: the token does not name the executors' client.
    const plain = (await tokensOf(PEOPLE.owner, 'gatehouse-test', 'openid')).access_token;
    const notForExecutors = await register({ subject_token: plain });
    expect(notForExecutors.status).toBe(422);
    const refusal = await notForExecutors.text();
    expect(JSON.parse(refusal)).toMatchObject({
      error: { code: 'SUBJECT_TOKEN_REFUSED', message: expect.stringContaining('wrong_audience') as string },
    });
    expect(refusal).not.toContain(plain);

    const good = await delegated(PEOPLE.owner);
    const [header, payload, signature = ''] = good.split('.');
    const flipped = `${signature.slice(0, -4)}${signature.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    const forged = await register({ subject_token: `${header}.${payload}.${flipped}` });
    expect(forged.status).toBe(422);
    expect(await forged.json()).toMatchObject({
      error: { code: 'SUBJECT_TOKEN_REFUSED', message: expect.stringContaining('bad_signature') as string },
    });

    const mismatch = await register({ subject_token: good, on_behalf_of: { issuer: ISSUER, subject: PEOPLE.lead.subject } });
    expect(mismatch.status).toBe(422);
    expect(await mismatch.json()).toMatchObject({ error: { code: 'SUBJECT_MISMATCH' } });
  });

  it("takes a fresh token of the run's own person, and refuses another person's", async () => {
    const created = await register({ subject_token: await delegated(PEOPLE.owner) });
    const run = (await created.json()) as { run_id: string };
    const put = (token: string): Promise<Response> =>
      fetch(`${g.policies[0]?.url ?? ''}/runs/${run.run_id}/subject-token`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${CONTROL_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ subject_token: token }),
      });
    expect((await put(await delegated(PEOPLE.owner))).status).toBe(200);
    const other = await put(await delegated(PEOPLE.lead));
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({ error: { code: 'SUBJECT_MISMATCH' } });
    const anonymous = await fetch(`${g.policies[0]?.url ?? ''}/runs/${run.run_id}/subject-token`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(anonymous.status).toBe(401);
  });
});

describe('the token exchanger, against Keycloak and Redis', () => {
  const keys = new Keyspace(`t-xchg-${Date.now()}:`);
  let redis: Redis;
  let delegation: DelegationStore;
  const steps: ExchangeStep[] = [];
  const exchanger = (): Promise<TokenExchanger> =>
    TokenExchanger.discover({ ...stackExchange, delegation, onStep: (step) => steps.push(step) });

  beforeAll(() => {
    redis = createRedis(redisUrlFromEnv(), 'test-exchanger');
    delegation = new DelegationStore(redis, keys, TEST_UNSEALER);
  });
  afterAll(async () => {
    await redis?.quit();
  });

  it('keeps acting for the person after their own token is gone, by the refresh token the exchange left, until they sign out', async () => {
    const tokens = await tokensOf(PEOPLE.owner, 'gatehouse-test', 'openid gatehouse.delegation');
    await delegation.saveSubjectToken('run-1', tokens.access_token, Date.now() + 60_000);

    // Concurrent asks share one exchange.
    const first = await exchanger();
    const asked = await Promise.all([first.tokenFor('run-1', RECORDS), first.tokenFor('run-1', RECORDS), first.tokenFor('run-1', RECORDS)]);
    expect(asked.every((outcome) => outcome.ok)).toBe(true);
    expect(new Set(asked.map((outcome) => (outcome.ok ? outcome.token : '')))).toHaveProperty('size', 1);
    expect(steps).toEqual(['exchanged']);

    // The person's token lapses; another executor (an empty cache) refreshes what the exchange left.
    await redis.del(keys.subjectToken('run-1'));
    const second = await exchanger();
    const refreshed = await second.tokenFor('run-1', RECORDS);
    expect(refreshed.ok).toBe(true);
    expect(steps).toEqual(['exchanged', 'refreshed']);
    const verifier = await AccessTokenVerifier.discover({ issuer: ISSUER, audience: RECORDS.audience });
    const checked = refreshed.ok ? await verifier.verify(refreshed.token) : undefined;
    expect(checked?.ok && checked.claims).toMatchObject({ sub: PEOPLE.owner.subject, azp: stackExchange.clientId });

    // The person signs out: no executor gets a new token for them.
    await signOut(tokens.refresh_token);
    const third = await exchanger();
    const ended = await third.tokenFor('run-1', RECORDS);
    expect(ended).toMatchObject({ ok: false, reason: 'refused' });
    expect(steps.at(-1)).toBe('refused');
    expect(await delegation.grant('run-1', RECORDS)).toBeUndefined();
  });
});

/** Ends the person's session at the IdP, as their sign-out would. */
async function signOut(refreshToken: string): Promise<void> {
  const response = await fetch(`${ISSUER}/protocol/openid-connect/logout`, {
    method: 'POST',
    body: new URLSearchParams({ client_id: 'gatehouse-test', refresh_token: refreshToken }),
  });
  expect(response.status).toBe(204);
}
