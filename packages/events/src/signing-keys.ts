/**
 * The keys Gatehouse services sign their events with, and the public halves readers trust, each
 * under a key id and tied to the role of the service that holds it. A reader accepts each kind of
 * event only from the roles that may issue it (an order from the policy or approval service, a
 * decision from the approval service), so a key that leaks from one service cannot vouch for what
 * another service says. Keys become KeyObjects once, when the configuration is parsed.
 */

import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { GatehouseError } from '@gatehouse/contracts';

/** The services that sign what they publish; every public key a reader holds belongs to one. */
export const KeyRole = { policy: 'policy', approval: 'approval', executor: 'executor' } as const;
export type KeyRole = (typeof KeyRole)[keyof typeof KeyRole];
export const KEY_ROLES: readonly KeyRole[] = Object.values(KeyRole);

export const KEY_ID = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** A key text that cannot be used. The message names the problem, never the key material. */
export class SigningKeyError extends GatehouseError<'SIGNING_KEY_INVALID'> {
  constructor(message: string) {
    super('SIGNING_KEY_INVALID', message);
  }
}

/** A service's private key and the id readers know its public half by. */
export interface SigningKey {
  readonly keyId: string;
  readonly privateKey: KeyObject;
}

/** Public keys by key id, as one configuration variable lists them. */
export type TrustedKeys = ReadonlyMap<string, KeyObject>;

/** A public key a reader holds, with the role of the service that signs with its private half. */
export interface RoleKey {
  readonly role: KeyRole;
  readonly key: KeyObject;
}

/** Every public key a reader trusts, by key id, each tied to one role. */
export type KeyRing = ReadonlyMap<string, RoleKey>;

function assertKeyId(keyId: string, where: string): void {
  // The id is not echoed when malformed: a pasted key with a missing separator would be all "id".
  if (!KEY_ID.test(keyId)) throw new SigningKeyError(`${where}: the key id must match ${KEY_ID.source}`);
}

/**
 * Strict base64: Buffer.from skips characters it does not know, so a truncated or mangled key would
 * otherwise decode to *some* bytes. Only text that re-encodes to itself is accepted.
 */
export function strictBase64(text: string): Buffer | undefined {
  const bytes = Buffer.from(text, 'base64');
  return bytes.length > 0 && bytes.toString('base64') === text ? bytes : undefined;
}

interface KeyEntry {
  readonly keyId: string;
  readonly der: Buffer;
}

function splitEntry(entry: string, where: string): KeyEntry {
  const colon = entry.indexOf(':');
  if (colon < 0) throw new SigningKeyError(`${where}: expected <keyId>:<base64 DER key>`);
  const keyId = entry.slice(0, colon);
  assertKeyId(keyId, where);
  const der = strictBase64(entry.slice(colon + 1));
  if (der === undefined) throw new SigningKeyError(`${where} (key id "${keyId}"): the key is not valid base64`);
  return { keyId, der };
}

// OpenSSL's own error is not passed on as `cause`: it says nothing a reader needs, and keeping
// every message we raise free of key material is easier to check with nothing attached.
function importKey(entry: KeyEntry, where: string, kind: 'private' | 'public'): KeyObject {
  let key: KeyObject;
  try {
    key =
      kind === 'private'
        ? createPrivateKey({ key: entry.der, format: 'der', type: 'pkcs8' })
        : createPublicKey({ key: entry.der, format: 'der', type: 'spki' });
  } catch {
    const expected = kind === 'private' ? 'a PKCS#8 DER private key' : 'an SPKI DER public key';
    throw new SigningKeyError(`${where} (key id "${entry.keyId}"): the key is not ${expected}`);
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new SigningKeyError(
      `${where} (key id "${entry.keyId}"): the key is ${key.asymmetricKeyType ?? 'of an unknown type'}, not Ed25519`,
    );
  }
  return key;
}

/** Parses `<keyId>:<base64 of a PKCS#8 DER Ed25519 private key>` (a signing service's configuration). */
export function parseSigningKey(text: string): SigningKey {
  const where = 'signing key';
  const entry = splitEntry(text.trim(), where);
  return { keyId: entry.keyId, privateKey: importKey(entry, where, 'private') };
}

/**
 * Parses a comma-separated list of `<keyId>:<base64 of an SPKI DER Ed25519 public key>` (one role's
 * keys in a reader's configuration). Blank entries are ignored; at least one key is required, and an
 * id may appear once only (two keys under one id would make "which key signed this" ambiguous).
 */
export function parseTrustedKeys(text: string): TrustedKeys {
  const trusted = new Map<string, KeyObject>();
  const entries = text.split(',').map((entry) => entry.trim());
  entries.forEach((entry, index) => {
    if (entry === '') return;
    const where = `trusted key ${index + 1}`;
    const parsed = splitEntry(entry, where);
    if (trusted.has(parsed.keyId)) throw new SigningKeyError(`${where}: key id "${parsed.keyId}" is listed twice`);
    trusted.set(parsed.keyId, importKey(parsed, where, 'public'));
  });
  if (trusted.size === 0) throw new SigningKeyError('trusted keys: at least one <keyId>:<base64 DER key> is required');
  return trusted;
}

/**
 * One reader's key ring from each role's keys. A key id may belong to one role only: a key shared by
 * two services would let either speak for the other, which is what roles exist to prevent.
 */
export function keyRing(byRole: Partial<Readonly<Record<KeyRole, TrustedKeys | undefined>>>): KeyRing {
  const ring = new Map<string, RoleKey>();
  const roleOfKey = new Map<string, { readonly role: KeyRole; readonly keyId: string }>();
  for (const role of KEY_ROLES) {
    for (const [keyId, key] of byRole[role] ?? new Map<string, KeyObject>()) {
      const held = ring.get(keyId);
      if (held !== undefined)
        throw new SigningKeyError(
          `key id "${keyId}" is listed for both the ${held.role} and the ${role} service; each service signs with a key of its own`,
        );
      // The same key under another id would let one service sign as the other all the same.
      const material = spki(key);
      const same = roleOfKey.get(material);
      if (same !== undefined && same.role !== role)
        throw new SigningKeyError(
          `key id "${keyId}" (${role}) is the same key as "${same.keyId}" (${same.role}); each service signs with a key of its own`,
        );
      roleOfKey.set(material, { role, keyId });
      ring.set(keyId, { role, key });
    }
  }
  return ring;
}

function spki(key: KeyObject): string {
  return key.export({ format: 'der', type: 'spki' }).toString('base64');
}

/**
 * Refuses to start a service of `role` whose own signing key a reader would take for another
 * role's: what it signed would pass as that service's.
 */
export function assertSignsAs(ring: KeyRing, key: SigningKey, role: KeyRole): void {
  const own = spki(createPublicKey(key.privateKey));
  for (const [keyId, held] of ring) {
    if (held.role !== role && spki(held.key) === own) {
      throw new SigningKeyError(
        `this ${role} service's signing key is listed as the ${held.role} service's key "${keyId}"; each service signs with a key of its own`,
      );
    }
  }
}

/** A fresh key pair as the two texts above: for local scripts and tests, not for production keys' storage. */
export function generateSigningKey(keyId: string): { signingKey: string; trustedKey: string } {
  assertKeyId(keyId, 'generated key');
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    signingKey: `${keyId}:${privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64')}`,
    trustedKey: `${keyId}:${publicKey.export({ format: 'der', type: 'spki' }).toString('base64')}`,
  };
}

/** The variable that lists each role's public keys. */
export const KEYS_VARIABLE: Readonly<Record<KeyRole, string>> = {
  policy: 'GATEHOUSE_POLICY_KEYS',
  approval: 'GATEHOUSE_APPROVAL_KEYS',
  executor: 'GATEHOUSE_EXECUTOR_KEYS',
};

/**
 * A key ring of `roles` from their variables (GATEHOUSE_POLICY_KEYS, GATEHOUSE_APPROVAL_KEYS,
 * GATEHOUSE_EXECUTOR_KEYS), for readers that do not use the services' configuration schema (the
 * client, the CLI). Each is required: what a role whose keys a reader lacks publishes could never be
 * told from a forgery. `why` ends the refusal.
 */
export function keyRingFromEnv(env: Readonly<Record<string, string | undefined>>, roles: readonly KeyRole[], why: string): KeyRing {
  const missing = roles.map((role) => KEYS_VARIABLE[role]).filter((name) => (env[name] ?? '').trim() === '');
  if (missing.length > 0) throw new SigningKeyError(`set ${missing.join(', ')}: ${why}`);
  return keyRing(Object.fromEntries(roles.map((role) => [role, parseTrustedKeys(env[KEYS_VARIABLE[role]] ?? '')])));
}
