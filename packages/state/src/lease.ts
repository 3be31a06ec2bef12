/** Stops renewing a lease; the holder then gives the lease back or lets it run out. */
export type StopRenewing = () => void;

/**
 * Renews a lease every third of its length until stopped. A renewal that fails (the lease was
 * taken over, Redis could not be reached) is not retried here: the holder's next step that needs
 * the lease (a fence before a send, a stage, a settlement) finds out and answers for it.
 */
export function keepRenewing(renew: () => Promise<boolean>, leaseMs: number): StopRenewing {
  const timer = setInterval(
    () => {
      renew().catch(() => undefined);
    },
    Math.max(50, Math.floor(leaseMs / 3)),
  );
  return () => clearInterval(timer);
}
