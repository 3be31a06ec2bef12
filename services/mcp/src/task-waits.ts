import type { CallResult } from '@gatehouse/client';
import type { Keyspace, Redis } from '@gatehouse/state';
import type { Logger } from '@gatehouse/telemetry';
import { isTerminal } from './task-store.js';
import type { StoredTask, TaskCall } from './task-store.js';

/** How a task's wait ends: its result, stored as the task's final state. */
export type StoreResult = (result: CallResult) => Promise<void>;

/**
 * The waits for tasks' results that this instance holds. A task is waited for by one instance at a
 * time, which holds the task's waiter lease and renews it while it waits. When that instance dies
 * (or shuts down), the lease goes, and the next `tasks/get` on any instance takes the task over: it
 * resumes the wait for the task's one command (same command_id, read from the reply partition that
 * command named), and never calls the tool again. So the task ends with the answer its command gets,
 * and a write it ordered runs at most once.
 */
export class TaskWaits {
  private readonly local = new Map<string, AbortController>();
  private readonly renewEveryMs: number;
  private closing = false;

  constructor(
    private readonly redis: Redis,
    private readonly keys: Keyspace,
    readonly instanceId: string,
    readonly leaseMs: number,
    private readonly logger: Logger,
  ) {
    this.renewEveryMs = Math.max(100, Math.floor(leaseMs / 3));
  }

  /**
   * Waits in the background for `result`, holding the lease of a task this instance created (it
   * holds the lease from creation), and stores what comes. `abort` stops the wait when the task is
   * cancelled here.
   */
  hold(runId: string, taskId: string, result: Promise<CallResult>, abort: AbortController, store: StoreResult): void {
    const lease = this.keys.mcpTaskWaiter(runId, taskId);
    this.local.set(`${runId}/${taskId}`, abort);
    const renew = setInterval(() => {
      this.redis.set(lease, this.instanceId, 'PX', this.leaseMs).catch(() => undefined);
    }, this.renewEveryMs);
    void result
      // A wait stopped by shutdown stores nothing: its lease goes, and another instance takes over.
      .then((outcome) => (this.closing ? undefined : store(outcome)))
      .catch((error: unknown) =>
        this.logger.info(
          { run_id: runId, task_id: taskId, reason: error instanceof Error ? error.message : String(error) },
          'task result not stored',
        ),
      )
      .finally(() => {
        clearInterval(renew);
        this.local.delete(`${runId}/${taskId}`);
        this.redis.del(lease).catch(() => undefined);
      });
  }

  /** Stops this instance's wait for a cancelled task, if it holds it; the write is never recalled. */
  stop(runId: string, taskId: string): void {
    this.local.get(`${runId}/${taskId}`)?.abort();
  }

  /**
   * Takes over a task that is still working but whose waiter is gone (no lease): this instance takes
   * the lease and resumes the wait for the task's command. True when it did; a task another instance
   * waits for is left alone.
   */
  async adoptIfOrphaned(
    runId: string,
    taskId: string,
    stored: StoredTask,
    resume: (call: TaskCall, signal: AbortSignal) => Promise<CallResult>,
    store: StoreResult,
  ): Promise<boolean> {
    if (isTerminal(stored.task.status) || stored.call === undefined) return false;
    const taken = await this.redis.set(this.keys.mcpTaskWaiter(runId, taskId), this.instanceId, 'PX', this.leaseMs, 'NX');
    if (taken !== 'OK') return false;
    this.logger.info(
      { run_id: runId, task_id: taskId, tool: stored.call.tool, command_id: stored.call.command?.commandId },
      'task taken over: its waiter is gone; waiting for its command',
    );
    const abort = new AbortController();
    this.hold(runId, taskId, resume(stored.call, abort.signal), abort, store);
    return true;
  }

  /** Stops every wait this instance holds (shutdown): their leases run out and another instance takes over. */
  close(): void {
    this.closing = true;
    for (const abort of this.local.values()) abort.abort();
  }
}
