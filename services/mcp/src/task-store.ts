import { randomBytes } from 'node:crypto';
import type { SentCommand } from '@gatehouse/client';
import { LuaScript } from '@gatehouse/state';
import type { Keyspace, Redis } from '@gatehouse/state';

/**
 * What a task waits for: the one command it sent, exactly as sent, and where its answers go — enough
 * for another instance to resume the wait for that command when the one that waited is gone. A task
 * is bound to this command for its whole life: nothing ever calls its tool again.
 */
export interface TaskCall {
  /** The tool's address (`name.vN`). */
  readonly tool: string;
  readonly traceparent?: string | undefined;
  /** Absent only in a task stored by a front door that kept no command: such a task is never taken over. */
  readonly command?: SentCommand;
}

/** A task as protocol 2025-11-25 shows it; 2026-07-28 renames two fields when it answers (`detailedTask`). */
export interface Task {
  readonly taskId: string;
  status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
  /** How long the task is kept, in ms. */
  readonly ttl: number | null;
  readonly createdAt: string;
  lastUpdatedAt: string;
  readonly pollInterval?: number;
  statusMessage?: string;
}

/** A tool's result as the task keeps it: the tools/call answer it would have had. */
export type TaskResult = Record<string, unknown>;

/** What a client may ask of a new task: how long to keep it, and how often to be asked. */
export interface CreateTaskOptions {
  readonly ttl?: number | undefined;
  readonly pollInterval?: number | undefined;
}

export interface StoredTask {
  task: Task;
  result?: TaskResult;
  call?: TaskCall;
}

/** The instance that waits for tasks' results, as the store tells it what happens to a task. */
export interface TaskWaiter {
  readonly instanceId: string;
  /** The instance that creates a task holds its waiter lease from the start, for this long. */
  readonly leaseMs: number;
  /** A task was read while it still works: take it over if its waiter is gone. */
  readonly working?: (taskId: string, stored: StoredTask) => void;
  /** A task was cancelled: stop waiting for it here. */
  readonly cancelled?: (taskId: string) => void;
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** Whether a task has finished (completed, failed or cancelled): nothing changes it afterwards. */
export const isTerminal = (status: string): boolean => TERMINAL.has(status);

// Moves a task that is not yet terminal to a new status (and result); refuses a terminal one, so a
// cancelled task is never completed afterwards by the wait that was still running.
const TRANSITION = new LuaScript(`
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local stored = cjson.decode(raw)
local status = stored.task.status
if status == 'completed' or status == 'failed' or status == 'cancelled' then return 2 end
stored.task.status = ARGV[1]
stored.task.lastUpdatedAt = ARGV[2]
if ARGV[3] ~= '' then stored.task.statusMessage = ARGV[3] end
if ARGV[4] ~= '' then stored.result = cjson.decode(ARGV[4]) end
redis.call('SET', KEYS[1], cjson.encode(stored), 'PX', ARGV[5])
return 1
`);

const PAGE_SIZE = 50;

/**
 * MCP tasks in Redis, scoped to one run: any instance of the front door can answer tasks/get,
 * tasks/result, tasks/list and tasks/cancel for a task another instance created, and a run never
 * sees another run's tasks (the store is made per request for the run the token names).
 */
export class RunTaskStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keyspace,
    private readonly runId: string,
    /** The longest a task is kept; a client's shorter `ttl` is honoured. */
    private readonly maxTtlMs: number,
    private readonly pollIntervalMs = 1_000,
    private readonly waiter: TaskWaiter | undefined = undefined,
  ) {}

  /** A new task, with what it calls, so that another instance can take it over, and what it waits for. */
  async createCallTask(params: CreateTaskOptions, call: TaskCall | undefined, statusMessage?: string): Promise<Task> {
    const taskId = `task_${randomBytes(16).toString('hex')}`;
    const now = new Date();
    const ttl = Math.min(params.ttl ?? this.maxTtlMs, this.maxTtlMs);
    const task: Task = {
      taskId,
      status: 'working',
      ttl,
      createdAt: now.toISOString(),
      lastUpdatedAt: now.toISOString(),
      pollInterval: params.pollInterval ?? this.pollIntervalMs,
      ...(statusMessage === undefined ? {} : { statusMessage }),
    };
    const stored: StoredTask = call === undefined ? { task } : { task, call };
    const batch = this.redis.multi();
    // One batch: no tasks/get ever sees the task without the lease of the instance that waits for it.
    if (this.waiter !== undefined)
      batch.set(this.keys.mcpTaskWaiter(this.runId, taskId), this.waiter.instanceId, 'PX', this.waiter.leaseMs);
    await batch
      .set(this.keys.mcpTask(this.runId, taskId), JSON.stringify(stored), 'PX', ttl)
      .zadd(this.keys.mcpTasksOfRun(this.runId), now.getTime(), taskId)
      .pexpire(this.keys.mcpTasksOfRun(this.runId), this.maxTtlMs)
      .exec();
    return task;
  }

  /** The task as stored: its state, its result once finished, and what it calls. */
  async read(taskId: string): Promise<StoredTask | undefined> {
    const raw = await this.redis.get(this.keys.mcpTask(this.runId, taskId));
    return raw === null ? undefined : (JSON.parse(raw) as StoredTask);
  }

  async getTask(taskId: string): Promise<Task | null> {
    const stored = await this.read(taskId);
    if (stored !== undefined) this.seen(taskId, stored);
    return stored?.task ?? null;
  }

  /** A task was just read: one still working is taken over here if its waiter is gone. */
  seen(taskId: string, stored: StoredTask): void {
    if (!isTerminal(stored.task.status)) this.waiter?.working?.(taskId, stored);
  }

  private async transition(
    taskId: string,
    status: Task['status'],
    statusMessage: string | undefined,
    result: TaskResult | undefined,
  ): Promise<void> {
    const stored = await this.read(taskId);
    if (stored === undefined) throw new Error(`Task ${taskId} not found`);
    const ttl = stored.task.ttl ?? this.maxTtlMs;
    const outcome = (await TRANSITION.run(
      this.redis,
      1,
      this.keys.mcpTask(this.runId, taskId),
      status,
      new Date().toISOString(),
      statusMessage ?? '',
      result === undefined ? '' : JSON.stringify(result),
      String(ttl),
    )) as number;
    if (outcome === 0) throw new Error(`Task ${taskId} not found`);
    if (outcome === 2) throw new Error(`Task ${taskId} has already finished`);
  }

  /** Cancels a task that has not finished; false when it had (a finished task keeps its result). */
  async cancel(taskId: string, statusMessage: string): Promise<boolean> {
    try {
      await this.updateTaskStatus(taskId, 'cancelled', statusMessage);
      return true;
    } catch (error) {
      if (error instanceof Error && error.message.endsWith('has already finished')) return false;
      throw error;
    }
  }

  async storeTaskResult(taskId: string, status: 'completed' | 'failed', result: TaskResult): Promise<void> {
    await this.transition(taskId, status, undefined, result);
  }

  async getTaskResult(taskId: string): Promise<TaskResult> {
    const stored = await this.read(taskId);
    if (stored?.result === undefined) throw new Error(`Task ${taskId} has no result`);
    return stored.result;
  }

  async updateTaskStatus(taskId: string, status: Task['status'], statusMessage?: string): Promise<void> {
    await this.transition(taskId, status, statusMessage, undefined);
    if (status === 'cancelled') this.waiter?.cancelled?.(taskId);
  }

  /** The run's tasks, oldest first; the cursor is the last task id of the previous page. */
  async listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const index = this.keys.mcpTasksOfRun(this.runId);
    let start = 0;
    if (cursor !== undefined) {
      const rank = await this.redis.zrank(index, cursor);
      if (rank === null) throw new Error(`Invalid cursor: ${cursor}`);
      start = rank + 1;
    }
    const ids = await this.redis.zrange(index, start, start + PAGE_SIZE);
    const page = ids.slice(0, PAGE_SIZE);
    const tasks = (await Promise.all(page.map((id) => this.getTask(id)))).filter((task): task is Task => task !== null);
    const last = page.at(-1);
    return ids.length > PAGE_SIZE && last !== undefined ? { tasks, nextCursor: last } : { tasks };
  }
}
