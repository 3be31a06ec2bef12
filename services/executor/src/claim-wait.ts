import { randomUUID } from 'node:crypto';
import type { Claim } from '@gatehouse/state';
import type { LedgerEntries } from './executor-ports.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Claims a key, waiting while another live owner holds it: that owner either finishes (the claim
 * then answers `stored`) or dies (its lease runs out and the claim answers `orphaned`). Skipping an
 * in-flight key instead would lose the call if its owner died. Bounded by `deadline`.
 */
export async function claimOrWait(
  store: Pick<LedgerEntries, 'claim'>,
  key: string,
  argumentsSha256: string,
  owner: string,
  leaseMs: number,
  deadline: number,
  commandId: string,
): Promise<Claim> {
  for (;;) {
    const claim = await store.claim(key, argumentsSha256, owner, leaseMs, commandId);
    if (claim.kind !== 'in_progress' || Date.now() >= deadline) return claim;
    await sleep(Math.min(250, Math.max(20, claim.leaseLeftMs)));
  }
}

/** Renews a lease every third of its length until stopped. */
export function keepLease(renew: () => Promise<boolean>, leaseMs: number): () => void {
  const timer = setInterval(
    () => {
      renew().catch(() => undefined);
    },
    Math.max(50, Math.floor(leaseMs / 3)),
  );
  return () => clearInterval(timer);
}

/** A fresh owner token per delivery: two copies of an order in this very process must not both run. */
export function ownerToken(executorId: string): string {
  return `${executorId}/${randomUUID().replace(/-/g, '').slice(0, 16)}`;
}
