import { setTimeout as delay } from 'node:timers/promises';
import { ProtocolError, ProtocolErrorCode, RELATED_TASK_META_KEY, Server } from '@modelcontextprotocol/server';
import type { JSONRPCRequest, Result, ServerContext } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import type { Run } from '@gatehouse/state';
import {
  INSTRUCTIONS,
  pendingMessage,
  runTaskStore,
  runTools,
  serverInfoOf,
  storeResultOf,
  taskDeadline,
  traceparentOf,
  waitInRequest,
} from './front-door.js';
import type { FrontDoor } from './front-door.js';
import { isTerminal } from './task-store.js';
import type { RunTaskStore, Task } from './task-store.js';
import { errorCodeOf, openToolCall, progressChannelOf } from './tool-call.js';

// Protocol 2025-11-25 carries tasks in its core: a tools/call may ask to run as one (`params.task`),
// and tasks/get, tasks/result, tasks/list and tasks/cancel read and end it. The current SDK keeps
// that vocabulary without a runtime, so the front door answers those five methods itself, over the
// run's task store in Redis; the SDK serves the rest of the revision (initialize, tools/list, ping,
// progress and cancellation).

const CallParams = z.looseObject({
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()).optional(),
  task: z.looseObject({ ttl: z.number().int().positive().optional() }).optional(),
  _meta: z.record(z.string(), z.unknown()).optional(),
});
const TaskIdParams = z.looseObject({ taskId: z.string().min(1) });
const ListParams = z.looseObject({ cursor: z.string().optional() }).optional();

function paramsOf<T>(schema: z.ZodType<T>, request: JSONRPCRequest): T {
  const parsed = schema.safeParse(request.params);
  if (!parsed.success)
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid ${request.method} request: ${parsed.error.message}`);
  return parsed.data;
}

const notFound = (taskId: string): ProtocolError => new ProtocolError(ProtocolErrorCode.InvalidParams, `Task not found: ${taskId}`);

/** A tools/call: its result within the request, or (when the client asks for one) a task that waits on. */
async function callTool(run: Run, door: FrontDoor, taskStore: RunTaskStore, request: JSONRPCRequest, ctx: ServerContext): Promise<Result> {
  const params = paramsOf(CallParams, request);
  const opening = openToolCall(run, door, params.name, params.arguments, {
    traceparent: traceparentOf(params._meta) ?? ctx.http?.req?.headers.get('traceparent'),
    // The revision the client negotiated, as its requests name it in their header.
    protocolVersion: ctx.http?.req?.headers.get('mcp-protocol-version') ?? undefined,
    requestId: request.id,
  });
  if ('refusal' in opening) return opening.refusal;
  const { span, address, call } = opening.opened;
  if (params.task !== undefined) {
    // The task keeps its command before the command is sent: whoever waits for it later waits for that one.
    const command = call.prepare(taskDeadline(run, door));
    const task = await taskStore.createCallTask(
      { ttl: params.task.ttl ?? door.taskTtlMs },
      { tool: address, traceparent: span.traceparent, command },
    );
    door.logger.info({ run_id: run.run_id, tenant: run.tenant, tool: address, task_id: task.taskId }, 'tools/call runs as a task');
    // The wait outlives this request: it ends with the result, the run's expiry, or the task's.
    const abort = new AbortController();
    const waiting = call(
      taskDeadline(run, door),
      (notice) => void taskStore.updateTaskStatus(task.taskId, 'working', pendingMessage(notice)).catch(() => undefined),
      abort.signal,
    );
    door.waits.hold(run.run_id, task.taskId, waiting, abort, storeResultOf(taskStore, task.taskId));
    span.end();
    return { task };
  }
  const channel = progressChannelOf(
    params._meta,
    (progress) => ctx.mcpReq.notify({ method: 'notifications/progress', params: progress }),
    ctx.mcpReq.signal,
  );
  const answer = await waitInRequest(params.name, call, channel, door);
  span.end(errorCodeOf(answer));
  return answer;
}

/** The task as it is now; one still working whose waiter is gone is taken over by this instance. */
async function taskNow(taskStore: RunTaskStore, taskId: string): Promise<Task> {
  const stored = await taskStore.read(taskId);
  if (stored === undefined) throw notFound(taskId);
  taskStore.seen(taskId, stored);
  return stored.task;
}

/** tasks/result: waits until the task has finished, then answers the result its tools/call would have had. */
async function taskResult(taskStore: RunTaskStore, taskId: string, signal: AbortSignal): Promise<Result> {
  for (;;) {
    const task = await taskNow(taskStore, taskId);
    if (isTerminal(task.status)) {
      const stored = await taskStore.read(taskId);
      const result = stored?.result;
      if (result === undefined) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Task ${taskId} ended ${task.status} without a result`);
      }
      const meta = (result['_meta'] as Record<string, unknown> | undefined) ?? {};
      return { ...result, _meta: { ...meta, [RELATED_TASK_META_KEY]: { taskId } } };
    }
    await delay(task.pollInterval ?? 1_000, undefined, { signal });
  }
}

async function cancelTask(taskStore: RunTaskStore, taskId: string): Promise<Result> {
  const task = await taskNow(taskStore, taskId);
  if (isTerminal(task.status))
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Cannot cancel task in terminal status: ${task.status}`);
  const cancelled = await taskStore.cancel(
    taskId,
    'Cancelled by the client: the wait stopped. A write already ordered still runs at most once; it is never recalled.',
  );
  const after = await taskStore.read(taskId);
  if (after === undefined) throw notFound(taskId);
  if (!cancelled) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Cannot cancel task in terminal status: ${after.task.status}`);
  return { ...after.task };
}

async function listTasks(taskStore: RunTaskStore, request: JSONRPCRequest): Promise<Result> {
  const params = paramsOf(ListParams, request);
  try {
    const page = await taskStore.listTasks(params?.cursor);
    return page.nextCursor === undefined ? { tasks: page.tasks } : { tasks: page.tasks, nextCursor: page.nextCursor };
  } catch (error) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Failed to list tasks: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/**
 * The 2025-11-25 server for one run (the handshake revision: a client opens with `initialize` and
 * the revision holds for the connection), made per request (Streamable HTTP without sessions) or once
 * (stdio). Tenant and principal come only from the run; tools/call publishes a ToolCommand and
 * answers with its ToolResult, or with a task when the client asks for one. Tasks live in Redis, so
 * any instance answers for any of the run's tasks, and a run never sees another's.
 */
export function createHandshakeRunServer(run: Run, door: FrontDoor): Server {
  const server = new Server(serverInfoOf(door), {
    capabilities: {
      tools: { listChanged: false },
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: door.jsonSchemaValidator,
  });
  const taskStore = runTaskStore(run, door);
  server.setRequestHandler('tools/list', () => ({ tools: runTools(run, door.catalog, 'handshake') }));
  server.fallbackRequestHandler = async (request, ctx) => {
    switch (request.method) {
      case 'tools/call':
        return callTool(run, door, taskStore, request, ctx);
      case 'tasks/get':
        return { ...(await taskNow(taskStore, paramsOf(TaskIdParams, request).taskId)) };
      case 'tasks/result':
        return taskResult(taskStore, paramsOf(TaskIdParams, request).taskId, ctx.mcpReq.signal);
      case 'tasks/list':
        return listTasks(taskStore, request);
      case 'tasks/cancel':
        return cancelTask(taskStore, paramsOf(TaskIdParams, request).taskId);
      default:
        throw new ProtocolError(ProtocolErrorCode.MethodNotFound, 'Method not found');
    }
  };
  return server;
}
