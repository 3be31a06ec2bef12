/**
 * What a test file must stop, registered as each thing starts, so that a start-up that fails half-way
 * still stops what it had started (processes, consumers, the Gatehouse itself).
 */
export class Teardown {
  private readonly steps: (() => Promise<unknown>)[] = [];

  /** Registers `stop` for `resource` and returns the resource. */
  add<T>(resource: T, stop: (resource: T) => Promise<unknown>): T {
    this.steps.push(() => stop(resource));
    return resource;
  }

  /** Runs every registered step at once; rejects with all failures after every step has settled. */
  async run(): Promise<void> {
    const steps = this.steps.splice(0);
    const failures = (await Promise.allSettled(steps.map((step) => step())))
      .filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected')
      .map((outcome) => outcome.reason as unknown);
    if (failures.length > 0) throw new AggregateError(failures, `${failures.length} teardown step(s) failed`);
  }
}
