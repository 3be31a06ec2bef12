/**
 * One signature for many records. A publisher that sends several signed events in one produce
 * request signs the root of a Merkle tree over their signing payloads once; each record carries that
 * signature and its own path to the root. A reader hashes the record's payload up its path and
 * checks the root's signature, which it verifies once per batch and then remembers.
 *
 * A record stays bound to what it says: altering it changes its leaf, so its path no longer reaches
 * a signed root; another record's path, or another batch's root, does not reach one either. Leaves
 * and inner nodes hash under different prefixes (RFC 6962's 0x00 and 0x01), so no inner node can be
 * passed off as a record, and the root is signed under a prefix of its own, so a root's signature is
 * never a single event's signature or the reverse.
 *
 * Cost (CPU per record, this project's 2-core machine, `node bench/dist/signing-cost.js`): see the
 * figures there; a path costs a hash per level, where a signature check costs an Ed25519 verify.
 */

import { createHash } from 'node:crypto';
import type { KeyRing } from './signing-keys.js';

/** The header that carries a record's path to the signed root of its batch. */
export const BATCH_PROOF_HEADER = 'gatehouse-batch-proof';

const ROOT_PREFIX = 'gatehouse.signed-batch.v1\n';
const LEAF = Buffer.from([0x00]);
const NODE = Buffer.from([0x01]);
const HASH_BYTES = 32;

/**
 * The most records under one root. It bounds a path (6 levels, ≈ 270 header bytes per record) while
 * a busy publisher still signs once per 64 records.
 */
export const MAX_BATCH_LEAVES = 64;
const MAX_LEVELS = 6;

const leafOf = (payload: Buffer): Buffer => createHash('sha256').update(LEAF).update(payload).digest();
const nodeOf = (left: Buffer, right: Buffer): Buffer => createHash('sha256').update(NODE).update(left).update(right).digest();

/** What the publisher signs for a batch: the root under its own prefix. */
export function rootSigningBytes(root: Buffer): Buffer {
  return Buffer.concat([Buffer.from(ROOT_PREFIX, 'utf8'), root]);
}

/**
 * The root over `payloads` (in order) and each payload's path to it, as its header value:
 * `<sides>.<base64 of the sibling hashes>`, where `sides` has one letter per level, `l` when the
 * sibling is on the left and `r` when it is on the right. A level where a node has no sibling (an
 * odd count) is carried up unchanged and takes no letter.
 */
export function batchTree(payloads: readonly Buffer[]): { root: Buffer; proofs: string[] } {
  if (payloads.length === 0 || payloads.length > MAX_BATCH_LEAVES)
    throw new RangeError(`a signed batch holds 1 to ${MAX_BATCH_LEAVES} records`);
  const sides: string[] = payloads.map(() => '');
  const siblings: Buffer[][] = payloads.map(() => []);
  // Which leaves sit under each node of the current level.
  let level = payloads.map(leafOf);
  let under: number[][] = payloads.map((_, i) => [i]);
  while (level.length > 1) {
    const next: Buffer[] = [];
    const nextUnder: number[][] = [];
    for (let i = 0; i < level.length; i += 2) {
      const left = level[i] as Buffer;
      const right = level[i + 1];
      const leftUnder = under[i] as number[];
      if (right === undefined) {
        next.push(left);
        nextUnder.push(leftUnder);
        continue;
      }
      const rightUnder = under[i + 1] as number[];
      for (const leaf of leftUnder) {
        sides[leaf] += 'r';
        siblings[leaf]?.push(right);
      }
      for (const leaf of rightUnder) {
        sides[leaf] += 'l';
        siblings[leaf]?.push(left);
      }
      next.push(nodeOf(left, right));
      nextUnder.push([...leftUnder, ...rightUnder]);
    }
    level = next;
    under = nextUnder;
  }
  const root = level[0] as Buffer;
  return { root, proofs: payloads.map((_, i) => `${sides[i] ?? ''}.${Buffer.concat(siblings[i] ?? []).toString('base64')}`) };
}

/** The root a payload's path leads to, or undefined when the path is not one `batchTree` writes. */
export function rootOf(payload: Buffer, proof: string): Buffer | undefined {
  const dot = proof.indexOf('.');
  if (dot < 1 || dot > MAX_LEVELS) return undefined;
  const sides = proof.slice(0, dot);
  if (!/^[lr]+$/.test(sides)) return undefined;
  const hashes = Buffer.from(proof.slice(dot + 1), 'base64');
  // Strict: the text must be exactly the encoding of one hash per level.
  if (hashes.length !== sides.length * HASH_BYTES || hashes.toString('base64') !== proof.slice(dot + 1)) return undefined;
  let node = leafOf(payload);
  for (let i = 0; i < sides.length; i += 1) {
    const sibling = hashes.subarray(i * HASH_BYTES, (i + 1) * HASH_BYTES);
    node = sides[i] === 'l' ? nodeOf(sibling, node) : nodeOf(node, sibling);
  }
  return node;
}

// Roots whose signatures a reader has checked, per key ring: a key id means what its ring says, so
// a root checked against one ring proves nothing to a reader holding another.
const VERIFIED_ROOTS_KEPT = 4_096;
const verifiedRoots = new WeakMap<KeyRing, Map<string, true>>();

function rootsOf(ring: KeyRing): Map<string, true> {
  let roots = verifiedRoots.get(ring);
  if (roots === undefined) {
    roots = new Map();
    verifiedRoots.set(ring, roots);
  }
  return roots;
}

const rootEntry = (keyId: string, signature: Buffer, root: Buffer): string =>
  `${keyId} ${signature.toString('base64')} ${root.toString('base64')}`;

/** Whether this root's signature under `keyId` was already found valid against `ring`. */
export function rootAlreadyVerified(ring: KeyRing, keyId: string, signature: Buffer, root: Buffer): boolean {
  return verifiedRoots.get(ring)?.has(rootEntry(keyId, signature, root)) === true;
}

/** Remembers a root whose signature was found valid (the oldest is forgotten first). */
export function rememberVerifiedRoot(ring: KeyRing, keyId: string, signature: Buffer, root: Buffer): void {
  const roots = rootsOf(ring);
  roots.set(rootEntry(keyId, signature, root), true);
  if (roots.size > VERIFIED_ROOTS_KEPT) {
    const oldest = roots.keys().next().value;
    if (oldest !== undefined) roots.delete(oldest);
  }
}
