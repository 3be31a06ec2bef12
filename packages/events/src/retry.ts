import { setTimeout as sleep } from 'node:timers/promises';

/** The longest wait between two tries. */
const MAX_DELAY_MS = 5_000;

export interface RetryOptions {
  /** The wait after the first failure; each later wait doubles, up to 5 s. */
  readonly firstDelayMs: number;
  /** Checked after each failure and each wait: once true, no further try is made. */
  readonly stopped: () => boolean;
  /** Hears each failure made while not stopped (to log it). */
  readonly failed: (error: unknown) => void;
}

/**
 * Runs `attempt` until it succeeds (true) or `stopped` holds after a failure (false), with doubling
 * waits between tries: for work that must not be skipped, such as a record or a group join.
 */
export async function untilSucceeds(attempt: () => Promise<void>, options: RetryOptions): Promise<boolean> {
  for (let delay = options.firstDelayMs; ; delay = Math.min(delay * 2, MAX_DELAY_MS)) {
    try {
      await attempt();
      return true;
    } catch (error) {
      if (options.stopped()) return false;
      options.failed(error);
    }
    await sleep(delay);
    if (options.stopped()) return false;
  }
}
