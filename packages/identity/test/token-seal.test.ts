import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateSealingKey, parseSealingKeys, parseUnsealingKeys, SEALED_TOKEN_TYPE, TokenSealer, TokenUnsealer } from '../src/index.js';
import type { SealContext } from '../src/index.js';

// A person's access token as the IdP issues it: what must never be readable at rest.
const TOKEN = `eyJhbGciOiJSUzI1NiJ9.${Buffer.from(JSON.stringify({ sub: 'person-1', aud: 'gatehouse-executor' })).toString('base64url')}.c2lnbmF0dXJl`;
const SUBJECT: SealContext = { runId: 'run_1', use: 'subject_token' };

const pair = (keyId: string) => {
  const { unsealingKey, sealingKey } = generateSealingKey(keyId);
  return { unsealing: parseUnsealingKeys(unsealingKey), sealing: parseSealingKeys(sealingKey), unsealingKey, sealingKey };
};

/** Re-encodes one base64url member of a General JSON JWE with its first byte flipped. */
function flipped(sealed: string, member: 'ciphertext' | 'tag' | 'iv' | 'protected'): string {
  const jwe = JSON.parse(sealed) as Record<string, string>;
  const bytes = Buffer.from(jwe[member] ?? '', 'base64url');
  bytes[0] = (bytes[0] ?? 0) ^ 0x01;
  return JSON.stringify({ ...jwe, [member]: bytes.toString('base64url') });
}

describe('sealed person tokens', () => {
  it('opens what was sealed to its key, for the same run and use, and stores neither the token nor a JWT', async () => {
    const key = pair('exec-seal-1');
    const sealed = await new TokenSealer(key.sealing).seal(TOKEN, SUBJECT);
    expect(sealed).not.toContain(TOKEN);
    expect(sealed).not.toContain(TOKEN.split('.')[1]);
    const jwe = JSON.parse(sealed) as { protected: string; recipients: { header: { alg: string; kid: string } }[] };
    expect(JSON.parse(Buffer.from(jwe.protected, 'base64url').toString('utf8'))).toMatchObject({
      enc: 'A256GCM',
      typ: SEALED_TOKEN_TYPE,
      run_id: 'run_1',
      use: 'subject_token',
    });
    expect(jwe.recipients.map((r) => [r.header.alg, r.header.kid])).toEqual([['ECDH-ES+A256KW', 'exec-seal-1']]);
    expect(await new TokenUnsealer(key.sealing, key.unsealing).open(sealed, SUBJECT)).toEqual({ ok: true, token: TOKEN });
  });

  it('refuses a sealed token for another run or another use', async () => {
    const key = pair('exec-seal-1');
    const unsealer = new TokenUnsealer(key.sealing, key.unsealing);
    const sealed = await unsealer.seal(TOKEN, SUBJECT);
    expect(await unsealer.open(sealed, { ...SUBJECT, runId: 'run_2' })).toEqual({ ok: false, reason: 'wrong_context' });
    expect(await unsealer.open(sealed, { ...SUBJECT, use: 'refresh_token:abc' })).toEqual({ ok: false, reason: 'wrong_context' });
  });

  it('refuses a token sealed to another key, and one whose recipient was renamed to a key it holds', async () => {
    const mine = pair('exec-seal-1');
    const other = pair('exec-seal-1');
    const unsealer = new TokenUnsealer(mine.sealing, mine.unsealing);
    const foreign = await new TokenSealer(parseSealingKeys(pair('elsewhere').sealingKey)).seal(TOKEN, SUBJECT);
    expect(await unsealer.open(foreign, SUBJECT)).toEqual({ ok: false, reason: 'no_key' });
    // The same key id, another key: the kid matches, the key does not.
    const sameId = await new TokenSealer(other.sealing).seal(TOKEN, SUBJECT);
    expect(await unsealer.open(sameId, SUBJECT)).toEqual({ ok: false, reason: 'undecryptable' });
  });

  it.each(['ciphertext', 'tag', 'iv', 'protected'] as const)('refuses a sealed token whose %s was changed', async (member) => {
    const key = pair('exec-seal-1');
    const unsealer = new TokenUnsealer(key.sealing, key.unsealing);
    const sealed = await unsealer.seal(TOKEN, SUBJECT);
    expect(await unsealer.open(flipped(sealed, member), SUBJECT)).toMatchObject({ ok: false });
  });

  it('refuses a protected header rewritten to name another run, though each part is well formed', async () => {
    const key = pair('exec-seal-1');
    const unsealer = new TokenUnsealer(key.sealing, key.unsealing);
    const jwe = JSON.parse(await unsealer.seal(TOKEN, SUBJECT)) as Record<string, string>;
    const header = { ...(JSON.parse(Buffer.from(jwe['protected'] ?? '', 'base64url').toString('utf8')) as object), run_id: 'run_2' };
    const moved = JSON.stringify({ ...jwe, protected: Buffer.from(JSON.stringify(header)).toString('base64url') });
    expect(await unsealer.open(moved, { ...SUBJECT, runId: 'run_2' })).toEqual({ ok: false, reason: 'undecryptable' });
  });

  it('treats what is not a sealed token (a token stored before sealing, a JWT, JSON of another shape) as malformed', async () => {
    const key = pair('exec-seal-1');
    const unsealer = new TokenUnsealer(key.sealing, key.unsealing);
    for (const stored of [TOKEN, '', '{}', '{"recipients":[null]}', '[]', 'null'])
      expect(await unsealer.open(stored, SUBJECT)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('rotates: sealed to the old and new keys while both are listed, opened by an executor holding either, and not once the old is dropped', async () => {
    const old = pair('exec-seal-2026-06');
    const next = pair('exec-seal-2026-12');
    const both = parseSealingKeys(`${next.sealingKey},${old.sealingKey}`);
    const duringRotation = await new TokenSealer(both).seal(TOKEN, SUBJECT);
    const sealedToOldOnly = await new TokenSealer(old.sealing).seal(TOKEN, SUBJECT);

    // An executor that holds only the new key opens what was sealed to both, not what was sealed to the old alone.
    const newOnly = new TokenUnsealer(both, next.unsealing);
    expect(await newOnly.open(duringRotation, SUBJECT)).toEqual({ ok: true, token: TOKEN });
    expect(await newOnly.open(sealedToOldOnly, SUBJECT)).toEqual({ ok: false, reason: 'no_key' });

    // One that holds both private keys opens each with the key its recipient names.
    const holdingBoth = new TokenUnsealer(next.sealing, parseUnsealingKeys(`${next.unsealingKey},${old.unsealingKey}`));
    expect(await holdingBoth.open(sealedToOldOnly, SUBJECT)).toEqual({ ok: true, token: TOKEN });
    expect(await holdingBoth.open(duringRotation, SUBJECT)).toEqual({ ok: true, token: TOKEN });
  });

  it('seals to P-256 keys too', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const sealing = parseSealingKeys(`p256:${publicKey.export({ format: 'der', type: 'spki' }).toString('base64')}`);
    const unsealing = parseUnsealingKeys(`p256:${privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64')}`);
    const unsealer = new TokenUnsealer(sealing, unsealing);
    expect(await unsealer.open(await unsealer.seal(TOKEN, SUBJECT), SUBJECT)).toEqual({ ok: true, token: TOKEN });
  });
});

describe('sealing keys', () => {
  it('refuses keys that are not X25519 or P-256, repeated ids, mangled base64 and empty lists, never echoing key material', () => {
    const ed25519 = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    const key = generateSealingKey('k1');
    expect(() => parseSealingKeys(`k1:${ed25519}`)).toThrow(/sealing key 1 \(key id "k1"\): the key is not an X25519 or P-256 key/);
    expect(() => parseSealingKeys(`${key.sealingKey},${key.sealingKey}`)).toThrow(/key id "k1" is listed twice/);
    expect(() => parseSealingKeys('k1:not base64!')).toThrow(/not valid base64/);
    expect(() => parseSealingKeys(' , ')).toThrow(/at least one/);
    expect(() => parseUnsealingKeys(key.sealingKey)).toThrow(/unsealing key 1 \(key id "k1"\): the key is not a PKCS#8 DER key/);
    expect(() => parseUnsealingKeys(key.unsealingKey.replace(':', ''))).toThrow(/^unsealing key 1: expected <keyId>:<base64 DER key>$/);
  });

  it('refuses an executor none of whose private keys the sealing set lists, or whose key id names another public key', () => {
    const mine = pair('exec-seal-1');
    const other = pair('exec-seal-1');
    const elsewhere = pair('elsewhere');
    expect(() => new TokenUnsealer(elsewhere.sealing, mine.unsealing)).toThrow(
      /none of the unsealing keys \(exec-seal-1\) is among the sealing keys \(elsewhere\)/,
    );
    expect(() => new TokenUnsealer(other.sealing, mine.unsealing)).toThrow(/sealing key "exec-seal-1" is not the public half/);
  });
});
