import {
  CLIENT_CAPABILITIES_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  Server,
} from '@modelcontextprotocol/server';
import type { CallToolResult, ServerContext } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import { toMcpToolResult } from '@gatehouse/client';
import type { CallResult, McpToolResult, PendingNotice } from '@gatehouse/client';
import type { Run } from '@gatehouse/state';
import {
  INSTRUCTIONS,
  localError,
  pendingMessage,
  runTaskStore,
  runTools,
  serverInfoOf,
  taskDeadline,
  waitInRequest,
} from './front-door.js';
import type { Caller, FrontDoor, RequestChannel } from './front-door.js';
import type { RunTaskStore, StoredTask } from './task-store.js';
import { errorCodeOf, openToolCall, progressChannelOf } from './tool-call.js';

/** The Tasks extension of protocol revision 2026-07-28 (SEP-2663). */
const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

const ENVELOPE_INSTRUCTIONS = INSTRUCTIONS.replace(
  'A write that needs a person answers `pending_approval` in _meta: call the same tool again with the same proposal_id to get its result; it runs at most once.',
  'A write that needs a person answers with a task while the person decides (clients with the io.modelcontextprotocol/tasks extension; others get `pending_approval` in _meta and call the same tool again with the same proposal_id). It runs at most once.',
);

const TaskIdParams = z.looseObject({ taskId: z.string().min(1) });
const UpdateParams = z.looseObject({ taskId: z.string().min(1), inputResponses: z.record(z.string(), z.unknown()).optional() });
const AnyResult = z.looseObject({});

/** Whether the request's own capabilities declare the Tasks extension (2026-07-28 negotiates per request). */
function declaresTasks(ctx: ServerContext): boolean {
  return envelopeDeclaresTasks(ctx.mcpReq.envelope);
}

function requireTasks(ctx: ServerContext): void {
  if (!declaresTasks(ctx)) {
    throw new ProtocolError(ProtocolErrorCode.MissingRequiredClientCapability, 'Missing required client capability', {
      requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
    });
  }
}

/** A task as `tasks/get` shows it (SEP-2663's DetailedTask): its state, and its result once done. */
function detailedTask(stored: StoredTask): Record<string, unknown> {
  const { task } = stored;
  const view: Record<string, unknown> = {
    taskId: task.taskId,
    status: task.status,
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: task.ttl ?? null,
    ...(task.pollInterval === undefined ? {} : { pollIntervalMs: task.pollInterval }),
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
  };
  // The result exactly as tools/call would have answered it on this revision.
  if (task.status === 'completed' && stored.result !== undefined) view['result'] = { resultType: 'complete', ...stored.result };
  if (task.status === 'failed') view['error'] = { code: ProtocolErrorCode.InternalError, message: task.statusMessage ?? 'the task failed' };
  return view;
}

/**
 * A tool's outcome as the task's final state. A tool error (a rejection, an expiry, a withdrawn
 * run) is a result with isError, so the task completes with it: SEP-2663 keeps `failed` for
 * JSON-RPC errors. The status message names the outcome for a person reading the task.
 */
const storeOutcome =
  (store: RunTaskStore, taskId: string) =>
  async (result: CallResult): Promise<void> => {
    const outcome = toMcpToolResult(result);
    await store
      .updateTaskStatus(taskId, 'working', result.ok ? 'Done.' : `${result.error.code}: ${result.error.message}`)
      .catch(() => undefined);
    await store.storeTaskResult(taskId, 'completed', outcome);
  };

async function storedOrRefuse(store: RunTaskStore, taskId: string): Promise<StoredTask> {
  const stored = await store.read(taskId);
  if (stored === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
  return stored;
}

/**
 * The call's result when it comes without a person; a task handle as soon as it waits for one. The
 * wait then goes on in the background, under the task's lease, until the decision.
 */
export async function answerOrTask(
  run: Run,
  door: FrontDoor,
  address: string,
  traceparent: string | undefined,
  call: Caller,
  channel: RequestChannel,
): Promise<McpToolResult | Record<string, unknown>> {
  const abort = new AbortController();
  const stopWithRequest = (): void => abort.abort();
  channel.signal.addEventListener('abort', stopWithRequest, { once: true });
  let firstNotice: (notice: PendingNotice) => void = () => undefined;
  const pending = new Promise<PendingNotice>((resolve) => (firstNotice = resolve));
  const made: { taskId?: string } = {};
  const taskStore = runTaskStore(run, door, storeOutcome);
  // The command is fixed before it is sent: if it comes to a task, the task keeps it.
  const command = call.prepare(taskDeadline(run, door));
  const waiting = call(
    taskDeadline(run, door),
    (notice) => {
      if (made.taskId === undefined) firstNotice(notice);
      else taskStore.updateTaskStatus(made.taskId, 'working', pendingMessage(notice)).catch(() => undefined);
    },
    abort.signal,
  );
  const first = await Promise.race([waiting.then((result) => ({ result })), pending.then((notice) => ({ notice }))]);
  channel.signal.removeEventListener('abort', stopWithRequest);
  if ('result' in first) {
    if (!first.result.ok && first.result.error.code === 'OPERATION_CANCELLED' && channel.signal.aborted) {
      return localError('OPERATION_CANCELLED', 'the request was cancelled; a write already ordered still runs at most once');
    }
    return toMcpToolResult(first.result);
  }
  // From here the wait belongs to the task, not to this request. One write: the task, what it
  // calls, what it waits for, and this instance's lease on it.
  const task = await taskStore.createCallTask(
    { ttl: door.taskTtlMs },
    { tool: address, traceparent, command },
    pendingMessage(first.notice),
  );
  made.taskId = task.taskId;
  door.logger.info(
    { run_id: run.run_id, tenant: run.tenant, tool: address, task_id: task.taskId, proposal_id: first.notice.proposal_id },
    'tools/call answered with a task: it waits for a person',
  );
  door.waits.hold(run.run_id, task.taskId, waiting, abort, storeOutcome(taskStore, task.taskId));
  return { resultType: 'task', ...detailedTask({ task }) };
}

/** Whether a 2026-07-28 request's envelope declares the Tasks extension. */
export function envelopeDeclaresTasks(envelope: Record<string, unknown> | undefined): boolean {
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: Record<string, unknown> } | undefined;
  return capabilities?.extensions?.[TASKS_EXTENSION] !== undefined;
}

/** Request context the front door reads before the SDK parses the request: the HTTP traceparent. */
export interface EnvelopeRequestInfo {
  readonly traceparentHeader: string | undefined;
}

/**
 * The 2026-07-28 server for one run and one request (the envelope revision: every request carries its
 * protocol version and capabilities in `_meta`, with no `initialize`). A commit that waits for a person answers with
 * a task handle (for a client that declares the Tasks extension); everything else answers inline.
 * Tasks live in Redis, so any instance answers `tasks/get` and `tasks/cancel` for any of the run's
 * tasks, and takes over one whose instance died.
 */
export function createEnvelopeRunServer(run: Run, door: FrontDoor, info: EnvelopeRequestInfo): Server {
  const server = new Server(serverInfoOf(door), {
    capabilities: { tools: { listChanged: false }, extensions: { [TASKS_EXTENSION]: {} } },
    instructions: ENVELOPE_INSTRUCTIONS,
    jsonSchemaValidator: door.jsonSchemaValidator,
  });
  const taskStore = runTaskStore(run, door, storeOutcome);

  // The run's tools change only with the pack (a new deployment) and the run (it ends): a client may
  // keep the list until the run ends, within the configured bound. The list is the run's own.
  server.setRequestHandler('tools/list', () => ({
    tools: runTools(run, door.catalog, 'envelope'),
    ttlMs: Math.max(0, Math.min(door.listTtlMs, run.expires_at - Date.now())),
    cacheScope: 'private' as const,
  }));

  server.setRequestHandler('tools/call', async (request, ctx) => {
    const name = request.params.name;
    const meta = request.params._meta as Record<string, unknown> | undefined;
    const opening = openToolCall(run, door, name, request.params.arguments, {
      traceparent: meta?.['traceparent'] ?? info.traceparentHeader,
      protocolVersion: (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[PROTOCOL_VERSION_META_KEY],
      requestId: ctx.mcpReq.id,
    });
    if ('refusal' in opening) return opening.refusal;
    const { span, address, call } = opening.opened;
    const channel = progressChannelOf(meta, (params) => ctx.mcpReq.notify({ method: 'notifications/progress', params }), ctx.mcpReq.signal);
    const answer = declaresTasks(ctx)
      ? await answerOrTask(run, door, address, span.traceparent, call, channel)
      : await waitInRequest(name, call, channel, door);
    span.end(errorCodeOf(answer));
    return answer as CallToolResult;
  });

  server.setRequestHandler('tasks/get', { params: TaskIdParams, result: AnyResult }, async (params, ctx) => {
    requireTasks(ctx);
    const stored = await storedOrRefuse(taskStore, params.taskId);
    taskStore.seen(params.taskId, stored);
    return detailedTask(stored);
  });

  // Gatehouse never asks the client for input during a task (an approval is another person's, never
  // an elicitation): there is nothing outstanding to answer, so responses are acknowledged and ignored.
  server.setRequestHandler('tasks/update', { params: UpdateParams, result: AnyResult }, async (params, ctx) => {
    requireTasks(ctx);
    await storedOrRefuse(taskStore, params.taskId);
    return {};
  });

  server.setRequestHandler('tasks/cancel', { params: TaskIdParams, result: AnyResult }, async (params, ctx) => {
    requireTasks(ctx);
    await storedOrRefuse(taskStore, params.taskId);
    await taskStore.cancel(
      params.taskId,
      'Cancelled by the client: the wait stopped. A write already ordered still runs at most once; it is never recalled.',
    );
    return {};
  });

  return server;
}
