import { randomUUID } from 'node:crypto';
import type { Consumer } from 'kafkajs';
import { toolAddress, toolError } from '@gatehouse/contracts';
import type { ToolArgs, ToolContract, ToolResultOf } from '@gatehouse/contracts';
import { createKafka, eventsConfigFromEnv, EventPublisher, EventSerde, topicNames, topicOffsets } from '@gatehouse/events';
import type { EventsConfig, ToolCommand, ToolResult, Topics } from '@gatehouse/events';
import { createLogger, newTraceparent } from '@gatehouse/telemetry';
import type { Logger } from '@gatehouse/telemetry';
import { toCallResult } from './call-result.js';
import type { CallResult, PendingNotice } from './call-result.js';

export interface ClientOptions {
  readonly config?: EventsConfig;
  readonly topics?: Topics;
  /** The control API of the policy service, for `tools()`; default GATEHOUSE_CONTROL_URL. */
  readonly controlUrl?: string;
  readonly clientId?: string;
  readonly logger?: Logger;
  /** Deadline of a call when the caller gives none (default 30 s). */
  readonly defaultTimeoutMs?: number;
}

export interface CallOptions {
  readonly runId: string;
  readonly tenant: string;
  readonly timeoutMs?: number;
  readonly commandId?: string;
  /** Sent as-is instead of JSON.stringify(args): for runtimes that already hold the model's JSON text. */
  readonly rawArguments?: string;
  /** Called when the call waits for a person (pending_approval); the promise settles on the decision. */
  readonly onPending?: (notice: PendingNotice) => void;
  /** W3C trace context of the call; a fresh trace is started when none is given. */
  readonly traceparent?: string;
  /**
   * Stops waiting (a caller that went away): the promise resolves with OPERATION_CANCELLED at once.
   * The command already published is not recalled; a write it causes still runs at most once.
   */
  readonly signal?: AbortSignal;
}

interface Waiter {
  resolve: (result: CallResult) => void;
  onPending: ((notice: PendingNotice) => void) | undefined;
  timer: NodeJS.Timeout;
}

export type ToolDefinitionFormat = 'mcp' | 'openai';

/**
 * The agent runtime's client: publishes ToolCommands and resolves each call with its typed result,
 * correlated by command_id, within its own deadline.
 */
export class GatehouseClient {
  private readonly waiters = new Map<string, Waiter>();

  private constructor(
    private readonly publisher: EventPublisher,
    private readonly consumer: Consumer,
    private readonly controlUrl: string,
    private readonly defaultTimeoutMs: number,
    private readonly log: Logger,
  ) {}

  static async create(options: ClientOptions = {}): Promise<GatehouseClient> {
    const config = options.config ?? eventsConfigFromEnv();
    const topics = options.topics ?? topicNames(config.topicPrefix);
    const logger = (options.logger ?? createLogger('client')).child({ clientId: options.clientId ?? 'gatehouse-client' });
    const kafka = createKafka(config, options.clientId ?? 'gatehouse-client', logger);
    const serde = new EventSerde({ registryUrl: config.registryUrl, topics });
    await serde.register('commands');
    await serde.register('results');
    const publisher = await EventPublisher.connect(kafka, serde);

    // Results published after this instant must all be seen: note the ends of the topic first, then
    // join a group of our own and start reading there.
    const admin = kafka.admin();
    await admin.connect();
    const ends = await topicOffsets(admin, topics.results);
    await admin.disconnect();

    const consumer = kafka.consumer({ groupId: `gatehouse-client-${randomUUID()}`, allowAutoTopicCreation: false });
    const client = new GatehouseClient(
      publisher,
      consumer,
      (options.controlUrl ?? process.env['GATEHOUSE_CONTROL_URL'] ?? 'http://127.0.0.1:8091').replace(/\/+$/, ''),
      options.defaultTimeoutMs ?? 30_000,
      logger,
    );
    let onJoin: () => void = () => undefined;
    const joined = new Promise<void>((resolve) => (onJoin = resolve));
    consumer.on(consumer.events.GROUP_JOIN, () => onJoin());
    await consumer.connect();
    await consumer.subscribe({ topic: topics.results, fromBeginning: false });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const decoded = await serde.decode('results', message.value);
        if (decoded.ok) client.settle(decoded.value);
      },
    });
    await joined;
    for (const end of ends) consumer.seek({ topic: topics.results, partition: end.partition, offset: end.offset });
    return client;
  }

  /**
   * Calls a tool by its address (`get_customer.v1`) and resolves with its terminal result (never
   * rejects for a refused call); `T` is the result type the caller expects.
   */
  call<T = unknown>(tool: string, args: unknown, options: CallOptions): Promise<CallResult<T>>;
  /**
   * Calls a tool by its contract: the call goes to the contract's address, and the arguments and the
   * result are typed by its schemas. (Listed last so that a wrong argument is reported against it.)
   */
  call<T extends ToolContract>(tool: T, args: ToolArgs<T>, options: CallOptions): Promise<CallResult<ToolResultOf<T>>>;
  async call(target: ToolContract | string, args: unknown, options: CallOptions): Promise<CallResult> {
    const tool = typeof target === 'string' ? target : toolAddress(target.name, target.version);
    const commandId = options.commandId ?? randomUUID();
    const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
    if (options.signal?.aborted === true) {
      const error = toolError('OPERATION_CANCELLED', 'the caller stopped waiting before the call was sent', { details: { source: 'client' } });
      return { ok: false, commandId, tool, status: 'error', error };
    }
    const sentAt = Date.now();
    const command: ToolCommand = {
      schema_version: 1,
      command_id: commandId,
      run_id: options.runId,
      tenant: options.tenant,
      tool,
      arguments: options.rawArguments ?? JSON.stringify(args),
      sent_at: sentAt,
      deadline_at: sentAt + timeoutMs,
    };
    const settled = new Promise<CallResult>((resolve) => {
      const giveUp = (error: CallResult & { ok: false }): void => {
        const waiter = this.waiters.get(commandId);
        if (waiter === undefined) return;
        clearTimeout(waiter.timer);
        this.waiters.delete(commandId);
        resolve(error);
      };
      const timer = setTimeout(() => {
        const error = toolError('TIMEOUT', `no result within ${timeoutMs} ms (client deadline)`, { details: { source: 'client' } });
        giveUp({ ok: false, commandId, tool, status: 'error', error });
      }, timeoutMs);
      this.waiters.set(commandId, { resolve, onPending: options.onPending, timer });
      options.signal?.addEventListener(
        'abort',
        () => {
          const error = toolError('OPERATION_CANCELLED', 'the caller stopped waiting; a write already ordered still runs at most once', {
            details: { source: 'client' },
          });
          giveUp({ ok: false, commandId, tool, status: 'error', error });
        },
        { once: true },
      );
    });
    // Every call is traced: one the caller did not place in a trace starts its own.
    const headers = { traceparent: options.traceparent ?? newTraceparent() };
    await this.publisher.publish('commands', options.tenant, command, headers);
    return settled;
  }

  /** The run's tools as MCP or OpenAI function-calling definitions, from the control API. */
  async tools(runId: string, format: ToolDefinitionFormat = 'mcp'): Promise<unknown[]> {
    const response = await fetch(`${this.controlUrl}/runs/${encodeURIComponent(runId)}/tools?format=${format}`);
    if (!response.ok) throw new Error(`control API answered HTTP ${response.status} for the tools of run ${runId}`);
    const body = (await response.json()) as { tools: unknown[] };
    return body.tools;
  }

  async close(): Promise<void> {
    for (const waiter of this.waiters.values()) clearTimeout(waiter.timer);
    this.waiters.clear();
    await this.consumer.disconnect();
    await this.publisher.disconnect();
  }

  private settle(event: ToolResult): void {
    const waiter = this.waiters.get(event.command_id);
    if (waiter === undefined) return;
    if (event.status === 'pending_approval') {
      if (event.pending !== null) waiter.onPending?.({ ...event.pending, commandId: event.command_id });
      return;
    }
    const result = toCallResult(event);
    if (result === undefined) return;
    clearTimeout(waiter.timer);
    this.waiters.delete(event.command_id);
    this.log.debug({ commandId: event.command_id, tool: event.tool, status: event.status }, 'call settled');
    waiter.resolve(result);
  }
}

export function createClient(options: ClientOptions = {}): Promise<GatehouseClient> {
  return GatehouseClient.create(options);
}
