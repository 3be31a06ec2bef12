import type { Logger } from '@gatehouse/telemetry';
import { DEFAULT_DRAIN_TIMEOUT_MS } from './consume.js';
import { unsupportedNode } from './node-version.js';
import { Teardown } from './teardown.js';

export interface MainOptions {
  /** Names the process in its log lines: `<name> ready`, `<name> failed to start`. */
  readonly name: string;
  readonly logger: Logger;
  /** How long a stop signal lets records already running finish (default 10 s). */
  readonly drainTimeoutMs?: number;
  /**
   * Reads the configuration and starts the service, registering in `teardown` how to stop what it
   * opens, in the order it opens it. Resolves once the service is ready, to the fields of its ready line.
   */
  readonly start: (teardown: Teardown) => Promise<Readonly<Record<string, unknown>>>;
}

/** How long a failed start-up may spend closing what it opened before the process exits anyway. */
const FAILED_START_CLEANUP_MS = 5_000;

/** How long a stopped process may linger (a client's timer, a socket) before it exits anyway. */
const LINGER_MS = 1_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * Exits with `code` as soon as nothing is left to do, so the last log lines (written asynchronously)
 * are out and in order; whatever still lingers after LINGER_MS is cut short.
 */
function exitSoon(code: number): void {
  process.exitCode = code;
  // Exit explicitly once the loop is empty: a start-up still pending at a stop is an unsettled
  // top-level await of the main module, which Node 22+ would otherwise report as exit code 13.
  process.once('beforeExit', () => process.exit(code));
  setTimeout(() => process.exit(code), LINGER_MS).unref();
}

/**
 * A service process from start to exit. SIGTERM or SIGINT stops it once (a second signal is only
 * logged): what started is closed newest first (the service drains, then its connections close)
 * and the process exits 0, or 1 if a step failed. A start-up that fails is logged as fatal, what
 * it had opened is closed, and the process exits 1. A signal during start-up closes what has
 * started so far and exits. On a Node it does not support, it logs which Node it needs and exits 1.
 */
export async function runMain(options: MainOptions): Promise<void> {
  const { name, logger } = options;
  // Before anything starts: on an older Node the first Kafka connection would fail, naming no Node.
  const tooOld = unsupportedNode(process.versions.node);
  if (tooOld !== undefined) {
    logger.fatal({ node: process.versions.node }, `${name} failed to start: ${tooOld}`);
    exitSoon(1);
    return;
  }
  const teardown = new Teardown();
  const stop = (signal: NodeJS.Signals): void => {
    if (teardown.closing) {
      logger.info({ signal }, 'already stopping');
      return;
    }
    logger.info({ signal }, 'stopping: finishing in-flight work');
    void teardown.close({ drainTimeoutMs: options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS }).then(
      () => exitSoon(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        exitSoon(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  try {
    const ready = await options.start(teardown);
    if (!teardown.closing) logger.info(ready, `${name} ready`);
  } catch (error) {
    // Stopped during start-up: the start-up failed under its closed resources, and the stop exits.
    if (teardown.closing) return;
    logger.fatal({ err: error }, `${name} failed to start`);
    await Promise.race([teardown.close().catch(() => undefined), sleep(FAILED_START_CLEANUP_MS)]);
    exitSoon(1);
  }
}
