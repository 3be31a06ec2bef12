import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { CryptoKey, JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { AccessTokenVerifier } from '../src/index.js';

const ISSUER = 'https://idp.example/realms/acme';
const AUDIENCE = 'gatehouse-approval';

describe('a bearer token checked by the access-token verifier', () => {
  let key: CryptoKey;
  let other: CryptoKey;
  let verifier: AccessTokenVerifier;

  beforeAll(async () => {
    ({ privateKey: key } = await generateKeyPair('ES256', { extractable: true }));
    ({ privateKey: other } = await generateKeyPair('ES256', { extractable: true }));
    const jwk: JWK = { ...(await exportJWK(key)), kid: 'k1', alg: 'ES256' };
    delete jwk.d;
    verifier = AccessTokenVerifier.withKeys({ issuer: ISSUER, audience: AUDIENCE }, createLocalJWKSet({ keys: [jwk] }));
  });

  const token = (claims: Record<string, unknown> = {}, options: { key?: CryptoKey; kid?: string; expiresIn?: string | number } = {}) =>
    new SignJWT({ sub: 'person-1', ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: options.kid ?? 'k1' })
      .setIssuer(typeof claims['iss'] === 'string' ? claims['iss'] : ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(options.expiresIn ?? '5m')
      .sign(options.key ?? key);

  it('accepts a token of the issuer for the audience, signed by its key, and gives its claims', async () => {
    const check = await verifier.verify(await token({ groups: ['support-leads'] }));
    expect(check).toMatchObject({ ok: true, claims: { iss: ISSUER, sub: 'person-1', groups: ['support-leads'] } });
  });

  it('names a token of another issuer wrong_issuer before looking at its signature', async () => {
    expect(await verifier.verify(await token({ iss: 'https://evil.example' }, { key: other }))).toMatchObject({
      ok: false,
      reason: 'wrong_issuer',
    });
  });

  it('refuses a token for another audience', async () => {
    const forOther = await new SignJWT({ sub: 'person-1' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience('another-api')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(key);
    expect(await verifier.verify(forOther)).toMatchObject({ ok: false, reason: 'wrong_audience' });
  });

  it('refuses an expired token, beyond the clock tolerance', async () => {
    expect(await verifier.verify(await token({}, { expiresIn: Math.floor(Date.now() / 1000) - 120 }))).toMatchObject({
      ok: false,
      reason: 'expired',
    });
  });

  it('refuses a token signed by another key under the issuer key id', async () => {
    expect(await verifier.verify(await token({}, { key: other }))).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  it('refuses a token under a key id the issuer does not publish', async () => {
    expect(await verifier.verify(await token({}, { key: other, kid: 'k9' }))).toMatchObject({ ok: false, reason: 'unknown_key' });
  });

  it('refuses a token whose payload was altered after signing', async () => {
    const [header, , signature] = (await token()).split('.');
    const forged = Buffer.from(JSON.stringify({ iss: ISSUER, aud: AUDIENCE, sub: 'someone-else', iat: 1, exp: 9_999_999_999 })).toString(
      'base64url',
    );
    expect(await verifier.verify(`${header}.${forged}.${signature}`)).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  it('refuses an unsigned token (alg none) and what is not a JWT', async () => {
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ iss: ISSUER, aud: AUDIENCE, sub: 'x', iat: 1, exp: 9_999_999_999 })).toString('base64url')}.`;
    expect(await verifier.verify(none)).toMatchObject({ ok: false });
    expect((await verifier.verify(none)).ok).toBe(false);
    expect(await verifier.verify('not-a-token')).toMatchObject({ ok: false, reason: 'malformed' });
    expect(await verifier.verify('')).toMatchObject({ ok: false, reason: 'malformed' });
  });

  it('refuses a token without a subject', async () => {
    const anonymous = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(key);
    expect(await verifier.verify(anonymous)).toMatchObject({ ok: false, reason: 'malformed' });
  });

  const typed = (claims: Record<string, unknown>, typ?: string) =>
    new SignJWT({ sub: 'person-1', ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', ...(typ === undefined ? {} : { typ }) })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(key);

  it('accepts an RFC 9068 access token (at+jwt) and a Keycloak access token (typ Bearer)', async () => {
    expect(await verifier.verify(await typed({}, 'at+jwt'))).toMatchObject({ ok: true });
    expect(await verifier.verify(await typed({ typ: 'Bearer', nonce: 'n-1' }, 'JWT'))).toMatchObject({ ok: true });
  });

  it('refuses an ID token whose audience is the API, whichever way the issuer marks it', async () => {
    // Keycloak marks an ID token in its payload.
    expect(await verifier.verify(await typed({ typ: 'ID' }, 'JWT'))).toMatchObject({ ok: false, reason: 'wrong_type' });
    // Google and Entra mark nothing: an ID token is known by the claims only ID tokens carry.
    expect(await verifier.verify(await typed({ nonce: 'n-1' }))).toMatchObject({ ok: false, reason: 'wrong_type' });
    expect(await verifier.verify(await typed({ at_hash: 'abc' }, 'JWT'))).toMatchObject({ ok: false, reason: 'wrong_type' });
  });

  it('refuses a refresh token, a logout token and a token of an unknown header type', async () => {
    expect(await verifier.verify(await typed({ typ: 'Refresh' }))).toMatchObject({ ok: false, reason: 'wrong_type' });
    expect(await verifier.verify(await typed({}, 'logout+jwt'))).toMatchObject({ ok: false, reason: 'wrong_type' });
    expect(await verifier.verify(await typed({}, 'secevent+jwt'))).toMatchObject({ ok: false, reason: 'wrong_type' });
  });
});
