import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  assertionJwks,
  CallAssertionSigner,
  CallAssertionVerifier,
  canonicalSha256,
  MemoryReplayGuard,
  requestMethod,
  refusalResponse,
  requestTarget,
} from '../src/index.js';
import type { CallFacts } from '../src/index.js';

const ISSUER = 'urn:gatehouse:test';
const AUDIENCE = 'customers';

const pair = () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicKey };
};

const WRITE_TARGET = '/customers/C-1842/address-changes';
const BODY = { customer_id: 'C-1842', expected_version: 3, destination: { line1: 'Hauptstr. 1', city: 'Berlin', country: 'DE' } };

function facts(overrides: Partial<CallFacts> = {}): CallFacts {
  return {
    audience: AUDIENCE,
    call: 'write',
    method: 'POST',
    target: WRITE_TARGET,
    principal: 'agent:support-bot',
    actor: 'executor-1',
    tenant: 'acme',
    runId: 'run-1',
    commandId: 'cmd-1',
    tool: 'support.commit_address_change.v2',
    onBehalfOf: { issuer: 'https://idp.example/realms/acme', subject: 'person-1' },
    argumentsSha256: canonicalSha256(BODY)!,
    idempotencyKey: 'run-1:prop-1:op-1',
    proposalId: 'prop-1',
    approvalId: 'appr-1',
    approver: 'https://idp.example/realms/acme#lead-1',
    expiresAt: Date.now() + 30_000,
    ...overrides,
  };
}

const READ_TARGET = '/customers/C-1842';

/** A read's facts: a GET of C-1842, the hash of the tool's arguments, no key or approval. */
function readFacts(overrides: Partial<CallFacts> = {}): CallFacts {
  return facts({
    call: 'read',
    method: 'GET',
    target: READ_TARGET,
    argumentsSha256: canonicalSha256({ customer_id: 'C-1842' })!,
    idempotencyKey: null,
    proposalId: null,
    approvalId: null,
    approver: null,
    ...overrides,
  });
}

describe('a call assertion, minted by an executor and checked by a system of record', () => {
  const current = pair();
  const stranger = pair();
  let signer: CallAssertionSigner;
  let verifier: CallAssertionVerifier;
  const writeRequest = (authorization: string | undefined, extra: Record<string, unknown> = {}) =>
    verifier.verify({
      authorization,
      call: 'write',
      method: 'POST',
      target: WRITE_TARGET,
      tenant: 'acme',
      idempotencyKey: 'run-1:prop-1:op-1',
      body: BODY,
      ...extra,
    });

  beforeAll(async () => {
    signer = await CallAssertionSigner.create(ISSUER, { keyId: 'exec-2026-12', privateKey: current.privateKey });
    verifier = new CallAssertionVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      keys: assertionJwks(new Map([['exec-2026-12', current.publicKey]])),
    });
  });

  it('accepts a write whose body, key, tenant and approval are the ones it names, and gives its claims', async () => {
    const check = await writeRequest(`Bearer ${await signer.mint(facts())}`);
    expect(check).toMatchObject({
      ok: true,
      claims: {
        iss: ISSUER,
        aud: AUDIENCE,
        sub: 'agent:support-bot',
        act: { sub: 'executor-1' },
        call: 'write',
        tenant: 'acme',
        run_id: 'run-1',
        tool: 'support.commit_address_change.v2',
        on_behalf_of: { iss: 'https://idp.example/realms/acme', sub: 'person-1' },
        idempotency_key: 'run-1:prop-1:op-1',
        proposal_id: 'prop-1',
        approval_id: 'appr-1',
      },
    });
  });

  it('gives each assertion its own jti and an exp no later than the one asked for', async () => {
    const expiresAt = Date.now() + 10_500;
    const [a, b] = await Promise.all([signer.mint(facts({ expiresAt })), signer.mint(facts({ expiresAt }))]);
    const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as { jti: string; exp: number };
    expect(claimsOf(a).jti).not.toBe(claimsOf(b).jti);
    expect(claimsOf(a).exp * 1000).toBeLessThanOrEqual(expiresAt);
  });

  it('refuses a request without an assertion (401 ASSERTION_MISSING)', async () => {
    expect(await writeRequest(undefined)).toMatchObject({ ok: false, status: 401, code: 'ASSERTION_MISSING' });
  });

  it('refuses an assertion signed by a key the executors do not publish, under their key id', async () => {
    const forger = await CallAssertionSigner.create(ISSUER, { keyId: 'exec-2026-12', privateKey: stranger.privateKey });
    expect(await writeRequest(`Bearer ${await forger.mint(facts())}`)).toMatchObject({ ok: false, status: 401, code: 'ASSERTION_INVALID' });
  });

  it('refuses an assertion of another issuer, for another audience, or expired', async () => {
    const otherIssuer = await CallAssertionSigner.create('urn:gatehouse:elsewhere', {
      keyId: 'exec-2026-12',
      privateKey: current.privateKey,
    });
    expect(await writeRequest(`Bearer ${await otherIssuer.mint(facts())}`)).toMatchObject({ status: 401, code: 'ASSERTION_INVALID' });
    expect(await writeRequest(`Bearer ${await signer.mint(facts({ audience: 'refunds' }))}`)).toMatchObject({
      status: 401,
      code: 'ASSERTION_INVALID',
    });
    const expired = await signer.mint(facts({ expiresAt: Date.now() - 20_000 }), Date.now() - 40_000);
    expect(await writeRequest(`Bearer ${expired}`)).toMatchObject({ status: 401, code: 'ASSERTION_EXPIRED' });
  });

  it('refuses a JWT of the right key that is not a call assertion (another typ), an unsigned one, and an altered one', async () => {
    const untyped = await new SignJWT({ call: 'write' })
      .setProtectedHeader({ alg: 'EdDSA', kid: 'exec-2026-12' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject('x')
      .setIssuedAt()
      .setExpirationTime('1m')
      .setJti('j')
      .sign(current.privateKey);
    expect(await writeRequest(`Bearer ${untyped}`)).toMatchObject({ status: 401, code: 'ASSERTION_INVALID' });
    const [header, payload] = (await signer.mint(facts())).split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'gatehouse-call+jwt' })).toString('base64url')}.${payload}.`;
    expect(await writeRequest(`Bearer ${none}`)).toMatchObject({ status: 401, code: 'ASSERTION_INVALID' });
    const genuine = await signer.mint(facts());
    const claims = JSON.parse(Buffer.from(genuine.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    const altered = Buffer.from(JSON.stringify({ ...claims, tenant: 'globex' })).toString('base64url');
    expect(await writeRequest(`Bearer ${header}.${altered}.${genuine.split('.')[2]}`, { tenant: 'globex' })).toMatchObject({
      status: 401,
      code: 'ASSERTION_INVALID',
    });
  });

  it('refuses an assertion that lives longer than the verifier accepts', async () => {
    expect(await writeRequest(`Bearer ${await signer.mint(facts({ expiresAt: Date.now() + 3_600_000 }))}`)).toMatchObject({
      status: 401,
      code: 'ASSERTION_INVALID',
    });
  });

  it('refuses the second presentation of one assertion, however it is used', async () => {
    const once = `Bearer ${await signer.mint(facts())}`;
    expect(await writeRequest(once)).toMatchObject({ ok: true });
    expect(await writeRequest(once)).toMatchObject({ ok: false, status: 401, code: 'ASSERTION_REPLAYED' });
  });

  it("refuses a read's assertion on a write route, and a write's on a status query", async () => {
    const read = await signer.mint(readFacts({ method: 'POST', target: WRITE_TARGET }));
    expect(await writeRequest(`Bearer ${read}`)).toMatchObject({ ok: false, status: 403, code: 'WRONG_CALL' });
    const write = await signer.mint(facts());
    const status = { call: 'status', method: 'POST', target: WRITE_TARGET, idempotencyKey: 'run-1:prop-1:op-1' } as const;
    expect(await verifier.verify({ authorization: `Bearer ${write}`, ...status })).toMatchObject({
      status: 403,
      code: 'WRONG_CALL',
    });
  });

  it("refuses another tenant's assertion", async () => {
    expect(await writeRequest(`Bearer ${await signer.mint(facts({ tenant: 'globex' }))}`)).toMatchObject({
      ok: false,
      status: 403,
      code: 'TENANT_MISMATCH',
    });
  });

  it('refuses a write whose body is not the approved arguments, or under another key, or without an approval', async () => {
    const changed = { ...BODY, destination: { ...BODY.destination, city: 'Paris' } };
    expect(await writeRequest(`Bearer ${await signer.mint(facts())}`, { body: changed })).toMatchObject({
      status: 403,
      code: 'BODY_MISMATCH',
    });
    expect(await writeRequest(`Bearer ${await signer.mint(facts())}`, { idempotencyKey: 'run-1:prop-1:op-2' })).toMatchObject({
      status: 403,
      code: 'IDEMPOTENCY_KEY_MISMATCH',
    });
    expect(await writeRequest(`Bearer ${await signer.mint(facts({ approvalId: null }))}`)).toMatchObject({
      status: 403,
      code: 'APPROVAL_MISSING',
    });
  });

  it('hashes the body canonically: the same arguments in another key order are the approved ones', async () => {
    const reordered = { destination: { country: 'DE', city: 'Berlin', line1: 'Hauptstr. 1' }, expected_version: 3, customer_id: 'C-1842' };
    expect(await writeRequest(`Bearer ${await signer.mint(facts())}`, { body: reordered })).toMatchObject({ ok: true });
  });

  it('takes a status query only for the key it names', async () => {
    const status = (key: string) =>
      signer.mint(
        facts({
          call: 'status',
          method: 'GET',
          target: '/operations/k-1',
          argumentsSha256: null,
          proposalId: null,
          approvalId: null,
          approver: null,
          idempotencyKey: key,
        }),
      );
    const query = { call: 'status', method: 'GET', target: '/operations/k-1', tenant: 'acme' } as const;
    expect(await verifier.verify({ authorization: `Bearer ${await status('k-1')}`, ...query, idempotencyKey: 'k-1' })).toMatchObject({
      ok: true,
    });
    expect(await verifier.verify({ authorization: `Bearer ${await status('k-1')}`, ...query, idempotencyKey: 'k-2' })).toMatchObject({
      status: 403,
      code: 'IDEMPOTENCY_KEY_MISMATCH',
    });
  });

  it.each([
    ['https://executor.example/.well-known/jwks.json', true],
    ['http://127.0.0.1:8092/.well-known/jwks.json', true],
    ['http://localhost:8092/.well-known/jwks.json', true],
    ['http://[::1]:8092/.well-known/jwks.json', true],
    ['http://executor:8092/.well-known/jwks.json', false],
    ['HTTP://10.0.0.7:8092/.well-known/jwks.json', false],
    ['http://127.0.0.1.attacker.example/.well-known/jwks.json', false],
    ['http://[::ffff:127.0.0.1]/.well-known/jwks.json', false],
  ])('takes a key set from %s: %s (plain HTTP from loopback only)', (keys, taken) => {
    const build = () => new CallAssertionVerifier({ issuer: ISSUER, audience: AUDIENCE, keys });
    if (taken) expect(build).not.toThrow();
    else expect(build).toThrow(/plain HTTP from another host/);
  });

  it('reads a key set from a file, and again when a rotation adds a key id it does not know', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'jwks-')), 'jwks.json');
    writeFileSync(file, JSON.stringify(assertionJwks(new Map([['exec-2026-12', current.publicKey]]))));
    const fromFile = new CallAssertionVerifier({ issuer: ISSUER, audience: AUDIENCE, keys: file });
    const read = (s: CallAssertionSigner) => s.mint(readFacts());
    const request = { call: 'read', method: 'GET', target: READ_TARGET } as const;
    expect(await fromFile.verify({ authorization: `Bearer ${await read(signer)}`, ...request, tenant: 'acme' })).toMatchObject({
      ok: true,
    });
    const next = pair();
    const rotated = await CallAssertionSigner.create(ISSUER, { keyId: 'exec-2027-01', privateKey: next.privateKey });
    expect(await fromFile.verify({ authorization: `Bearer ${await read(rotated)}`, ...request })).toMatchObject({
      code: 'ASSERTION_INVALID',
    });
    writeFileSync(
      file,
      JSON.stringify(
        assertionJwks(
          new Map([
            ['exec-2026-12', current.publicKey],
            ['exec-2027-01', next.publicKey],
          ]),
        ),
      ),
    );
    expect(await fromFile.verify({ authorization: `Bearer ${await read(rotated)}`, ...request })).toMatchObject({ ok: true });
  });

  it('publishes public keys only, one per key id, as EdDSA signing keys', () => {
    const jwks = assertionJwks(new Map([['exec-2026-12', current.publicKey]]));
    expect(jwks).toEqual({
      keys: [{ kty: 'OKP', crv: 'Ed25519', x: expect.any(String) as string, kid: 'exec-2026-12', alg: 'EdDSA', use: 'sig' }],
    });
    expect(() => assertionJwks(new Map([['exec-2026-12', current.privateKey]]))).toThrow(/private key/);
  });
});

describe('a call assertion covers the one request it names, a read included', () => {
  const keys = pair();
  let signer: CallAssertionSigner;
  let verifier: CallAssertionVerifier;
  const expiries: number[] = [];
  const read = async (request: { method: string; target: string }, minted: Partial<CallFacts> = {}) =>
    verifier.verify({ authorization: `Bearer ${await signer.mint(readFacts(minted))}`, call: 'read', tenant: 'acme', ...request });

  beforeAll(async () => {
    signer = await CallAssertionSigner.create(ISSUER, { keyId: 'exec-2026-12', privateKey: keys.privateKey });
    const memory = new MemoryReplayGuard();
    verifier = new CallAssertionVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      keys: assertionJwks(new Map([['exec-2026-12', keys.publicKey]])),
      replay: {
        firstSeen: (jti, expiresAtMs) => {
          expiries.push(expiresAtMs);
          return memory.firstSeen(jti, expiresAtMs);
        },
      },
    });
  });

  it('accepts a read on the method, path and query it names, and gives them as its claims', async () => {
    const target = '/customers/C-1842/orders?state=open&page_size=5';
    expect(await read({ method: 'GET', target }, { target })).toMatchObject({ ok: true, claims: { method: 'GET', target } });
  });

  it("refuses a read's assertion presented on another customer's path of the same tenant (403 TARGET_MISMATCH)", async () => {
    expect(await read({ method: 'GET', target: '/customers/C-1001' })).toMatchObject({ ok: false, status: 403, code: 'TARGET_MISMATCH' });
    expect(await read({ method: 'GET', target: '/customers/C-1842/orders' })).toMatchObject({ code: 'TARGET_MISMATCH' });
  });

  it('burns no id on a presentation it refuses: the honest request of the same assertion still passes, once', async () => {
    const once = `Bearer ${await signer.mint(readFacts())}`;
    const present = (target: string) => verifier.verify({ authorization: once, call: 'read', tenant: 'acme', method: 'GET', target });
    expect(await present('/customers/C-1001')).toMatchObject({ ok: false, code: 'TARGET_MISMATCH' });
    expect(await present(READ_TARGET)).toMatchObject({ ok: true });
    expect(await present(READ_TARGET)).toMatchObject({ ok: false, code: 'ASSERTION_REPLAYED' });
  });

  it('refuses, retryably, when the shared replay memory cannot be asked (503 REPLAY_MEMORY_UNAVAILABLE)', async () => {
    const down = new CallAssertionVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      keys: assertionJwks(new Map([['exec-2026-12', keys.publicKey]])),
      replay: { firstSeen: () => Promise.reject(new Error('connection refused')) },
    });
    const check = await down.verify({
      authorization: `Bearer ${await signer.mint(readFacts())}`,
      call: 'read',
      tenant: 'acme',
      method: 'GET',
      target: READ_TARGET,
    });
    expect(check).toMatchObject({ ok: false, status: 503, code: 'REPLAY_MEMORY_UNAVAILABLE' });
    if (check.ok) return;
    expect(refusalResponse(check).body.error.retryable).toBe(true);
  });

  it('refuses an assertion presented with another method on its own path (403 METHOD_MISMATCH)', async () => {
    expect(await read({ method: 'HEAD', target: READ_TARGET })).toMatchObject({ ok: false, status: 403, code: 'METHOD_MISMATCH' });
    expect(await read({ method: 'POST', target: READ_TARGET })).toMatchObject({ code: 'METHOD_MISMATCH' });
  });

  it('refuses an assertion presented with another query, a query added, or its query dropped', async () => {
    const named = '/customers/C-1842/orders?state=open';
    expect(await read({ method: 'GET', target: '/customers/C-1842/orders?state=shipped' }, { target: named })).toMatchObject({
      code: 'TARGET_MISMATCH',
    });
    expect(await read({ method: 'GET', target: `${named}&cursor=abc` }, { target: named })).toMatchObject({ code: 'TARGET_MISMATCH' });
    expect(await read({ method: 'GET', target: '/customers/C-1842/orders' }, { target: named })).toMatchObject({
      code: 'TARGET_MISMATCH',
    });
    expect(await read({ method: 'GET', target: `${READ_TARGET}?expand=notes` })).toMatchObject({ code: 'TARGET_MISMATCH' });
  });

  it('refuses a write with the approved body under its key on another path', async () => {
    const authorization = `Bearer ${await signer.mint(facts())}`;
    const write = { call: 'write', method: 'POST', tenant: 'acme', idempotencyKey: 'run-1:prop-1:op-1', body: BODY } as const;
    expect(await verifier.verify({ authorization, ...write, target: '/customers/C-1001/address-changes' })).toMatchObject({
      status: 403,
      code: 'TARGET_MISMATCH',
    });
  });

  it('refuses an assertion of the right key that names no request (401 ASSERTION_INVALID)', async () => {
    const genuine = await signer.mint(readFacts());
    // The claims an executor minted before assertions named their request: all but method and target.
    const unbound = JSON.parse(Buffer.from(genuine.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    delete unbound['method'];
    delete unbound['target'];
    const jwt = await new SignJWT(unbound)
      .setProtectedHeader({ alg: 'EdDSA', typ: 'gatehouse-call+jwt', kid: 'exec-2026-12' })
      .sign(keys.privateKey);
    expect(await verifier.verify({ authorization: `Bearer ${jwt}`, call: 'read', method: 'GET', target: READ_TARGET })).toMatchObject({
      ok: false,
      status: 401,
      code: 'ASSERTION_INVALID',
      message: 'the claim method names no HTTP method',
    });
  });

  it('remembers an id as long as the assertion is accepted: to its exp and the clock tolerance past it', async () => {
    const expiresAt = Date.now() + 20_000;
    await read({ method: 'GET', target: READ_TARGET }, { expiresAt });
    expect(expiries.at(-1)).toBe((Math.floor(expiresAt / 1000) + 5) * 1000);
  });

  it('names the request as fetch sends it: upper-cased standard methods, the path and query of the URL without host or fragment', () => {
    expect([requestMethod('get'), requestMethod('Post'), requestMethod('patch'), requestMethod('PATCH')]).toEqual([
      'GET',
      'POST',
      'patch',
      'PATCH',
    ]);
    expect(requestTarget('https://crm.example:8443/customers/C-1842/orders?state=open#top')).toBe('/customers/C-1842/orders?state=open');
    expect(requestTarget(new URL('http://crm.example/a b/./c/../d?q=é'))).toBe('/a%20b/d?q=%C3%A9');
    expect(requestTarget('http://crm.example')).toBe('/');
    expect(() => requestTarget('/customers/C-1842')).toThrow();
  });

  it('mints no assertion for a request that is not a method and a path', async () => {
    await expect(signer.mint(readFacts({ target: 'customers/C-1842' }))).rejects.toThrow(/names one request/);
    await expect(signer.mint(readFacts({ method: 'GET /x' }))).rejects.toThrow(/names one request/);
  });
});

describe('the replay memory of one process', () => {
  it('forgets an id once its assertion has expired, and only then', () => {
    const guard = new MemoryReplayGuard();
    expect(guard.firstSeen('j-1', 2_000, 1_000)).toBe(true);
    expect(guard.firstSeen('j-1', 2_000, 1_500)).toBe(false);
    expect(guard.firstSeen('j-1', 5_000, 2_001)).toBe(true);
  });
});
