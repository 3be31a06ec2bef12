/** What a stop is given: how long records already running may take to finish. */
export interface StopOptions {
  /** Bounds the drain of in-flight records (each consumer's default when absent: 10 s). */
  readonly drainTimeoutMs?: number;
}

/** Closes one thing a start-up opened; consumers read `drainTimeoutMs`, the rest ignore it. */
export type TeardownStep = (options: StopOptions) => Promise<unknown> | void;

/**
 * What a start-up opened, closed in reverse: the last thing started is the first stopped. A service
 * starts its connections, then its consumer, then its API, so it stops taking work first, drains,
 * and only then closes its publisher and connections. The same list undoes a start-up that failed
 * half-way, so nothing it opened keeps the process alive.
 */
export class Teardown {
  readonly #steps: TeardownStep[] = [];
  #closed: Promise<void> | undefined;

  /** True once `close()` has been called. */
  get closing(): boolean {
    return this.#closed !== undefined;
  }

  /** Registers how to close what just started; once closing has begun, closes it at once. */
  add(step: TeardownStep): void {
    if (this.#closed === undefined) {
      this.#steps.push(step);
      return;
    }
    const late = async (): Promise<void> => {
      await step({});
    };
    late().catch(() => undefined);
  }

  /**
   * Runs every step, newest first, each after the previous one settled; a step that fails does not
   * skip the others. Rejects with the failure (an AggregateError when several failed). Calling it
   * again returns the first call's promise: a service is stopped once.
   */
  close(options: StopOptions = {}): Promise<void> {
    this.#closed ??= this.#run(options);
    return this.#closed;
  }

  async #run(options: StopOptions): Promise<void> {
    const failures: unknown[] = [];
    for (const step of this.#steps.splice(0).reverse()) {
      try {
        await step(options);
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) throw new AggregateError(failures, `${failures.length} steps of the stop failed`);
  }
}

/**
 * Runs a start-up that registers what it opens in a Teardown; if it throws, closes what it had
 * opened, newest first, and rethrows its error (the one worth reporting, not a closing one's).
 */
export async function withTeardown<T>(start: (teardown: Teardown) => Promise<T>): Promise<T> {
  const teardown = new Teardown();
  try {
    return await start(teardown);
  } catch (error) {
    await teardown.close().catch(() => undefined);
    throw error;
  }
}
