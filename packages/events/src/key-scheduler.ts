/**
 * Runs tasks with a global concurrency bound and a per-key bound, taking keys round-robin so one busy
 * key (a tenant) cannot take every slot. Tasks of one key start in arrival order.
 */
export class KeyScheduler {
  private readonly queues = new Map<string, (() => Promise<void>)[]>();
  private readonly runningByKey = new Map<string, number>();
  private readonly ready: string[] = [];
  private readonly readySet = new Set<string>();
  private running = 0;
  private queued = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly maxConcurrency: number,
    private readonly maxPerKey: number,
  ) {}

  /** Tasks accepted and not finished (queued or running). */
  get size(): number {
    return this.running + this.queued;
  }

  get active(): number {
    return this.running;
  }

  /** Accepts a task; it runs when a global slot and a slot of its key are free. */
  submit(key: string, task: () => Promise<void>): void {
    let queue = this.queues.get(key);
    if (queue === undefined) {
      queue = [];
      this.queues.set(key, queue);
    }
    queue.push(task);
    this.queued += 1;
    this.markReady(key);
    this.pump();
  }

  /** Resolves once nothing is queued or running. */
  idle(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private markReady(key: string): void {
    if ((this.runningByKey.get(key) ?? 0) >= this.maxPerKey || this.readySet.has(key)) return;
    this.readySet.add(key);
    this.ready.push(key);
  }

  private pump(): void {
    while (this.running < this.maxConcurrency && this.ready.length > 0) {
      const key = this.ready.shift() as string;
      this.readySet.delete(key);
      const task = this.queues.get(key)?.shift();
      if (task === undefined) continue;
      this.queued -= 1;
      this.running += 1;
      this.runningByKey.set(key, (this.runningByKey.get(key) ?? 0) + 1);
      // Round robin: the key goes to the back of the line if it has more and may run more.
      if ((this.queues.get(key)?.length ?? 0) > 0) this.markReady(key);
      void task()
        .catch(() => undefined)
        .finally(() => this.done(key));
    }
  }

  private done(key: string): void {
    this.running -= 1;
    const onKey = (this.runningByKey.get(key) ?? 1) - 1;
    if (onKey === 0) this.runningByKey.delete(key);
    else this.runningByKey.set(key, onKey);
    const queue = this.queues.get(key);
    if (queue !== undefined && queue.length > 0) this.markReady(key);
    else if (queue !== undefined && onKey === 0) this.queues.delete(key);
    this.pump();
    if (this.size === 0 && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }
}
