/**
 * People's tokens at rest, sealed so that only executors can open them. The MCP front door and the
 * control API keep a person's access token for their run, and executors keep the refresh tokens
 * token exchange leaves; all of it sits in Redis, which many can read. So each token is stored as a
 * JWE (General JSON serialization) encrypted to every one of the executors' public sealing keys
 * (ECDH-ES+A256KW, A256GCM): the writers hold only those public keys, each executor the private
 * halves of its own. The run and the use (`subject_token`, or a refresh token for one target) are
 * protected header parameters, so a sealed token copied under another run's key, or to another
 * use, is refused when opened. A recipient's `kid` names the key it is sealed to: an executor
 * holding several private keys (the old and the new while rotating) opens with the matching one.
 */

import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { GatehouseError } from '@gatehouse/contracts';
import { GeneralEncrypt, generalDecrypt } from 'jose';
import type { GeneralJWE } from 'jose';

/** The JWE `typ` of a sealed token: nothing else Gatehouse or the IdP issues carries it. */
export const SEALED_TOKEN_TYPE = 'gatehouse-sealed+jwe';
const KEY_MANAGEMENT = 'ECDH-ES+A256KW';
const CONTENT_ENCRYPTION = 'A256GCM';
const KEY_ID = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** What a token is sealed for: its run, and what it is to that run (both must match to open it). */
export interface SealContext {
  readonly runId: string;
  readonly use: string;
}

/** Public sealing keys by key id (X25519 or P-256): what writers seal to. */
export type SealingKeys = ReadonlyMap<string, KeyObject>;
/** An executor's private sealing keys by key id. */
export type UnsealingKeys = ReadonlyMap<string, KeyObject>;

/** Why a sealed token did not open. Each is treated as no token at all. */
export type UnsealRefusal =
  /** Not a sealed token (or one of another format, such as a token stored before sealing). */
  | 'malformed'
  /** Sealed to none of this executor's keys (a key rotated away too early). */
  | 'no_key'
  /** Sealed to a key of this executor, but the ciphertext or its headers were changed. */
  | 'undecryptable'
  /** Sealed for another run or another use. */
  | 'wrong_context';

export type UnsealOutcome = { readonly ok: true; readonly token: string } | { readonly ok: false; readonly reason: UnsealRefusal };

/** A sealing key text that cannot be used. The message names the problem, never the key material. */
export class SealingKeyError extends GatehouseError<'SEALING_KEY_INVALID'> {
  constructor(message: string) {
    super('SEALING_KEY_INVALID', message);
  }
}

function strictBase64(text: string): Buffer | undefined {
  const bytes = Buffer.from(text, 'base64');
  return bytes.length > 0 && bytes.toString('base64') === text ? bytes : undefined;
}

function isSealingType(key: KeyObject): boolean {
  return key.asymmetricKeyType === 'x25519' || (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1');
}

function importEntry(entry: string, where: string, kind: 'private' | 'public'): [string, KeyObject] {
  const colon = entry.indexOf(':');
  if (colon < 0) throw new SealingKeyError(`${where}: expected <keyId>:<base64 DER key>`);
  const keyId = entry.slice(0, colon);
  // The id is not echoed when malformed: a pasted key with a missing separator would be all "id".
  if (!KEY_ID.test(keyId)) throw new SealingKeyError(`${where}: the key id must match ${KEY_ID.source}`);
  const der = strictBase64(entry.slice(colon + 1));
  if (der === undefined) throw new SealingKeyError(`${where} (key id "${keyId}"): the key is not valid base64`);
  let key: KeyObject;
  try {
    key =
      kind === 'private'
        ? createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })
        : createPublicKey({ key: der, format: 'der', type: 'spki' });
  } catch {
    throw new SealingKeyError(`${where} (key id "${keyId}"): the key is not ${kind === 'private' ? 'a PKCS#8' : 'an SPKI'} DER key`);
  }
  if (!isSealingType(key)) throw new SealingKeyError(`${where} (key id "${keyId}"): the key is not an X25519 or P-256 key`);
  return [keyId, key];
}

function parseList(text: string, kind: 'private' | 'public'): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>();
  const label = kind === 'private' ? 'unsealing key' : 'sealing key';
  text.split(',').forEach((raw, index) => {
    const entry = raw.trim();
    if (entry === '') return;
    const [keyId, key] = importEntry(entry, `${label} ${index + 1}`, kind);
    if (keys.has(keyId)) throw new SealingKeyError(`${label} ${index + 1}: key id "${keyId}" is listed twice`);
    keys.set(keyId, key);
  });
  if (keys.size === 0) throw new SealingKeyError(`${label}s: at least one <keyId>:<base64 DER key> is required`);
  return keys;
}

/** Parses comma-separated `<keyId>:<base64 SPKI DER X25519 or P-256 public key>`: the executors' public sealing keys. */
export function parseSealingKeys(text: string): SealingKeys {
  return parseList(text, 'public');
}

/** Parses comma-separated `<keyId>:<base64 PKCS#8 DER X25519 or P-256 private key>`: an executor's own. */
export function parseUnsealingKeys(text: string): UnsealingKeys {
  return parseList(text, 'private');
}

/** A fresh X25519 pair as the two texts above: for local scripts and tests, not for production keys' storage. */
export function generateSealingKey(keyId: string): { readonly unsealingKey: string; readonly sealingKey: string } {
  if (!KEY_ID.test(keyId)) throw new SealingKeyError(`generated key: the key id must match ${KEY_ID.source}`);
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  return {
    unsealingKey: `${keyId}:${privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64')}`,
    sealingKey: `${keyId}:${publicKey.export({ format: 'der', type: 'spki' }).toString('base64')}`,
  };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Seals people's tokens to every one of the executors' public sealing keys. What the writers hold. */
export class TokenSealer {
  constructor(private readonly keys: SealingKeys) {
    if (keys.size === 0) throw new SealingKeyError('sealing keys: at least one is required');
  }

  /** The JWE (General JSON serialization, as text) that only a holder of one of the keys opens, and only for `context`. */
  async seal(token: string, context: SealContext): Promise<string> {
    const jwe = new GeneralEncrypt(encoder.encode(token)).setProtectedHeader({
      enc: CONTENT_ENCRYPTION,
      typ: SEALED_TOKEN_TYPE,
      run_id: context.runId,
      use: context.use,
    });
    for (const [kid, key] of this.keys) jwe.addRecipient(key).setUnprotectedHeader({ alg: KEY_MANAGEMENT, kid });
    return JSON.stringify(await jwe.encrypt());
  }
}

/**
 * Seals as the writers do, and opens with this executor's private keys. At least one of them must be
 * a key the sealing set lists, or this executor could open neither what it seals nor what the
 * writers seal; a key id in both must name the same pair.
 */
export class TokenUnsealer extends TokenSealer {
  constructor(
    sealing: SealingKeys,
    private readonly unsealing: UnsealingKeys,
  ) {
    super(sealing);
    let listed = 0;
    for (const [keyId, privateKey] of unsealing) {
      const published = sealing.get(keyId);
      if (published === undefined) continue;
      if (!published.equals(createPublicKey(privateKey)))
        throw new SealingKeyError(`sealing key "${keyId}" is not the public half of the unsealing key of that id`);
      listed += 1;
    }
    if (listed === 0)
      throw new SealingKeyError(
        `none of the unsealing keys (${[...unsealing.keys()].join(', ')}) is among the sealing keys (${[...sealing.keys()].join(', ')}): nothing sealed could be opened`,
      );
  }

  /** The token `sealed` holds, when it is sealed to a key of this executor, for `context`, and untouched. */
  async open(sealed: string, context: SealContext): Promise<UnsealOutcome> {
    const jwe = parseJwe(sealed);
    if (jwe === undefined) return { ok: false, reason: 'malformed' };
    if (!jwe.recipients.some((recipient) => this.unsealing.has(recipient.header?.kid ?? ''))) return { ok: false, reason: 'no_key' };
    let opened: Awaited<ReturnType<typeof generalDecrypt>>;
    try {
      opened = await generalDecrypt(
        jwe,
        (_protectedHeader, recipient) => {
          const key = this.unsealing.get(recipient.header?.kid ?? '');
          if (key === undefined) throw new Error('not sealed to a key of this executor');
          return key;
        },
        { keyManagementAlgorithms: [KEY_MANAGEMENT], contentEncryptionAlgorithms: [CONTENT_ENCRYPTION] },
      );
    } catch {
      return { ok: false, reason: 'undecryptable' };
    }
    const header = opened.protectedHeader ?? {};
    if (header.typ !== SEALED_TOKEN_TYPE || header['run_id'] !== context.runId || header['use'] !== context.use)
      return { ok: false, reason: 'wrong_context' };
    try {
      return { ok: true, token: decoder.decode(opened.plaintext) };
    } catch {
      return { ok: false, reason: 'malformed' };
    }
  }
}

function parseJwe(text: string): GeneralJWE | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const isObject = (value: unknown): value is object => typeof value === 'object' && value !== null;
  if (!isObject(parsed)) return undefined;
  const recipients = (parsed as { recipients?: unknown }).recipients;
  if (!Array.isArray(recipients) || !recipients.every(isObject)) return undefined;
  return parsed as GeneralJWE;
}
