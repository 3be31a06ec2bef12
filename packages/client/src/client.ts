import { randomUUID } from 'node:crypto';
import { toolAddress, toolError } from '@gatehouse/contracts';
import type { ToolArgs, ToolContract, ToolResultOf } from '@gatehouse/contracts';
import {
  createKafka,
  DeadLetters,
  eventsConfigFromEnv,
  EventPublisher,
  EventSerde,
  kafkaErrorCodes,
  RUN_PROOF_HEADER,
  RunKey,
  RunKeyError,
  startReplyReader,
  topicNames,
  wellFormedCommand,
} from '@gatehouse/events';
import type { CommandProver, EventsConfig, KeyRing, ReplyReader, ToolCommand, ToolResult, Topics } from '@gatehouse/events';
import {
  contextOf,
  createLogger,
  endSpan,
  newTraceparent,
  REPLY_PARTITION_HEADER,
  startCallSpan,
  startTracing,
  traceHeadersOf,
  tracerFor,
} from '@gatehouse/telemetry';
import type { Logger, Span, Tracing } from '@gatehouse/telemetry';
import { toCallResult } from './call-result.js';
import { resultKeysFromEnv } from './result-keys.js';
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
  /**
   * The results partition this instance reads, where every answer to its commands is routed.
   * Default: the partition the fewest live instances read when this one starts. Give each instance
   * its own (a StatefulSet ordinal, say) to be sure it reads nothing but its own answers.
   */
  readonly replyPartition?: number;
  /**
   * Export this process's spans over OTLP/HTTP to this base URL; default OTEL_EXPORTER_OTLP_ENDPOINT.
   * Unset, the client exports nothing but still sends W3C trace context with every command.
   */
  readonly otlpEndpoint?: string;
  /**
   * The public keys of the services that answer (policy, approval, executors): an answer none of
   * them signed is dead-lettered and never handed to the caller. Default: GATEHOUSE_POLICY_KEYS,
   * GATEHOUSE_APPROVAL_KEYS and GATEHOUSE_EXECUTOR_KEYS.
   */
  readonly resultKeys?: KeyRing;
  /** Called for every answer refused, with the reason (`stats().untrusted` counts them too). */
  readonly onUntrusted?: (reason: string) => void;
  /**
   * Proves every command this client sends whose run's key it does not hold: an MCP front door's
   * key. Without it, a command is proved with its run's key (`CallOptions.runKey`, or `holdRunKey`).
   */
  readonly prover?: CommandProver;
}

/** What this instance has read of the results topic. */
export interface ClientStats {
  readonly replyPartition: number;
  /** Result records fetched: this instance's answers, plus those of any instance sharing its partition. */
  readonly recordsRead: number;
  /** Result records that did not decode, sent to the results DLQ (never dropped quietly). */
  readonly deadLettered: number;
  /** Result records no trusted key vouched for, sent to the results DLQ and never handed to a caller. */
  readonly untrusted: number;
  /** Publishes of a command that failed and were tried again under the same command_id. */
  readonly publishRetries: number;
}

export interface CallOptions {
  readonly runId: string;
  readonly tenant: string;
  /**
   * The run's key, as its registration returned it (`run_key`): every command proves its run with
   * it, and the policy service answers nothing else. Default: the key `holdRunKey` was given for the run.
   */
  readonly runKey?: string | RunKey;
  readonly timeoutMs?: number;
  readonly commandId?: string;
  /** Sent as-is instead of JSON.stringify(args): for runtimes that already hold the model's JSON text. */
  readonly rawArguments?: string;
  /** Called when the call waits for a person (pending_approval); the promise settles on the decision. */
  readonly onPending?: (notice: PendingNotice) => void;
  /** W3C trace context of the call (its span is a child of it); a fresh trace is started when none is given. */
  readonly traceparent?: string;
  /**
   * Stops waiting (a caller that went away): the promise resolves with OPERATION_CANCELLED at once.
   * The command already published is not recalled; a write it causes still runs at most once.
   */
  readonly signal?: AbortSignal;
}

/** Where the answers to a command are read: its reply partition, from the offset its sender's reader stood at. */
export interface ReplyPoint {
  readonly partition: number;
  /** An offset (decimal text: it is kept in JSON and Redis as it is). */
  readonly from: string;
}

/** A command sent earlier, exactly as it was sent, and where its answers go: what `resume` waits for. */
export interface SentCommand {
  readonly commandId: string;
  readonly runId: string;
  readonly tenant: string;
  readonly tool: string;
  /** The arguments as sent (JSON text). */
  readonly rawArguments: string;
  readonly sentAt: number;
  readonly deadlineAt: number;
  readonly reply: ReplyPoint;
}

export interface ResumeOptions {
  /** The run's key, as for `call`: the command is proved again with it. */
  readonly runKey?: string | RunKey;
  readonly onPending?: (notice: PendingNotice) => void;
  readonly traceparent?: string;
  /** Stops waiting; the command is not recalled. */
  readonly signal?: AbortSignal;
}

interface Waiter {
  tool: string;
  resolve: (result: CallResult) => void;
  onPending: ((notice: PendingNotice) => void) | undefined;
  timer: NodeJS.Timeout;
  /** The call's span: from the call until its answer arrives, it times out or the caller stops waiting. */
  span: Span;
}

/** Ends a call's span with how the call ended. */
function endCallSpan(span: Span, result: CallResult): void {
  endSpan(span, result.ok ? { status: 'ok' } : { status: result.status, code: result.error.code });
}

const tracer = tracerFor('client');

export type ToolDefinitionFormat = 'mcp' | 'openai';

/**
 * The agent runtime's client: publishes ToolCommands and resolves each call with its typed result,
 * correlated by command_id, within its own deadline.
 */
export class GatehouseClient {
  private readonly waiters = new Map<string, Waiter>();
  private reader: ReplyReader | undefined;
  /** Opens a reader of a results partition from an offset, handing answers to this client (for resume). */
  private readerAt: (point: ReplyPoint) => Promise<ReplyReader> = () => Promise.reject(new Error('the client is not started'));
  private replyPartitionHeader = '';
  private publishRetries = 0;
  private prover: CommandProver | undefined;
  /** Run keys by run id (`holdRunKey`), and keys given as text by that text, parsed once. */
  private readonly runKeys = new Map<string, RunKey>();
  private readonly parsedKeys = new Map<string, RunKey>();

  private constructor(
    private readonly publisher: EventPublisher,
    private readonly controlUrl: string,
    private readonly defaultTimeoutMs: number,
    private readonly log: Logger,
    private readonly tracing: Tracing,
  ) {}

  static async create(options: ClientOptions = {}): Promise<GatehouseClient> {
    const config = options.config ?? eventsConfigFromEnv();
    // First, with the endpoint: a client that could not tell a forged answer from a real one is refused before anything connects.
    const resultKeys = options.resultKeys ?? resultKeysFromEnv();
    const topics = options.topics ?? topicNames(config.topicPrefix);
    const logger = (options.logger ?? createLogger('client')).child({ clientId: options.clientId ?? 'gatehouse-client' });
    // The OTLP endpoint alone turns span export on in the agent runtime's process; a process that
    // already exports (a service hosting a client, the runtime's own SDK) keeps its provider.
    // First: a malformed endpoint is refused before anything is connected.
    const tracing = startTracing({ serviceName: 'gatehouse-client', endpoint: options.otlpEndpoint });
    const kafka = createKafka(config, options.clientId ?? 'gatehouse-client');
    const serde = new EventSerde({ registryUrl: config.registryUrl, topics });
    let publisher: EventPublisher;
    try {
      await serde.register('commands');
      await serde.register('results');
      publisher = await EventPublisher.connect(kafka, serde);
    } catch (error) {
      await tracing.shutdown().catch(() => undefined);
      throw error;
    }
    const client = new GatehouseClient(
      publisher,
      (options.controlUrl ?? process.env['GATEHOUSE_CONTROL_URL'] ?? 'http://127.0.0.1:8091').replace(/\/+$/, ''),
      options.defaultTimeoutMs ?? 30_000,
      logger,
      tracing,
    );
    try {
      // Answers are routed to the partition this instance reads: it reads its own, not every tenant's.
      const reading = {
        kafka,
        serde,
        deadLetters: new DeadLetters(publisher),
        logger,
        trust: { keys: resultKeys, ...(options.onUntrusted === undefined ? {} : { refused: options.onUntrusted }) },
        handle: (result: ToolResult) => client.settle(result),
      };
      client.reader = await startReplyReader({
        ...reading,
        ...(options.replyPartition === undefined ? {} : { partition: options.replyPartition }),
      });
      client.readerAt = (point) => startReplyReader({ ...reading, partition: point.partition, from: BigInt(point.from) });
    } catch (error) {
      await publisher.disconnect().catch(() => undefined);
      await tracing.shutdown().catch(() => undefined);
      throw error;
    }
    client.replyPartitionHeader = String(client.reader.partition);
    client.prover = options.prover;
    return client;
  }

  /**
   * Holds the key of a run (`run_key`, as its registration returned it) for every call of that run
   * that names no key of its own. A run's key never changes; holding it again replaces it.
   */
  holdRunKey(runId: string, key: string | RunKey): void {
    this.runKeys.set(runId, typeof key === 'string' ? RunKey.parse(key) : key);
  }

  /** The headers that prove `command`, routed to `replyPartition`, speaks for its run. Throws RunKeyError without a key. */
  private proofOf(command: ToolCommand, replyPartition: number, given: string | RunKey | undefined): Record<string, string> {
    const key = this.keyOf(command.run_id, given);
    if (key !== undefined) return key.prove(command, replyPartition);
    if (this.prover !== undefined) return this.prover(command, replyPartition);
    throw new RunKeyError(
      'RUN_KEY_MISSING',
      `no key for run ${command.run_id}: give the run_key its registration returned (CallOptions.runKey, or holdRunKey)`,
    );
  }

  /** The key a call or request of `runId` proves its run with: the one given, else the one held for the run. */
  private keyOf(runId: string, given: string | RunKey | undefined): RunKey | undefined {
    if (given === undefined) return this.runKeys.get(runId);
    return typeof given === 'string' ? this.parsed(given) : given;
  }

  private parsed(text: string): RunKey {
    const held = this.parsedKeys.get(text);
    if (held !== undefined) return held;
    const key = RunKey.parse(text);
    if (this.parsedKeys.size >= 1_000) this.parsedKeys.clear();
    this.parsedKeys.set(text, key);
    return key;
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
      const error = toolError('OPERATION_CANCELLED', 'the caller stopped waiting before the call was sent', {
        details: { source: 'client' },
      });
      return { ok: false, commandId, tool, status: 'error', error };
    }
    const sentAt = Date.now();
    // Sent as it will read back: a lone surrogate (say, in a model's raw arguments) becomes U+FFFD.
    const command = wellFormedCommand({
      schema_version: 1,
      command_id: commandId,
      run_id: options.runId,
      tenant: options.tenant,
      tool,
      arguments: options.rawArguments ?? JSON.stringify(args),
      sent_at: sentAt,
      deadline_at: sentAt + timeoutMs,
    });
    // Every call is traced: one the caller did not place in a trace starts its own. Its span is the
    // parent of everything the command causes; with no tracer recording, the caller's context (or a
    // fresh one) travels as it is.
    const parent = options.traceparent === undefined ? undefined : contextOf({ traceparent: options.traceparent });
    const { span, context } = startCallSpan(tracer, `call ${tool}`, parent, {
      tool,
      tenant: options.tenant,
      run_id: options.runId,
      command_id: commandId,
    });
    let proof: Record<string, string>;
    try {
      proof = this.proofOf(command, Number(this.replyPartitionHeader), options.runKey);
    } catch (error) {
      endSpan(span, { status: 'error' });
      throw error;
    }
    const settled = this.awaitAnswer(command.command_id, tool, timeoutMs, span, options);
    await this.sendWithin(
      settled,
      this.send(command, { ...this.headersOf(traceHeadersOf(context), this.replyPartitionHeader), ...proof }, options.signal),
    );
    return settled;
  }

  /**
   * Waits for a send, but never past the call's answer: a call resolves within its deadline even
   * when a publish does not settle (the Kafka client retries one request for minutes), and a send
   * that fails for good before the answer still throws.
   */
  private async sendWithin(settled: Promise<CallResult>, sending: Promise<void>): Promise<void> {
    // Once the answer is there, a later failure of the send has no one to tell.
    sending.catch(() => undefined);
    await Promise.race([sending, settled]);
  }

  /**
   * Where this instance's answers will be read from: its reply partition and the offset every answer
   * to a command sent from now on lies at or after. A front door that keeps a call beyond its own
   * life (an MCP task) keeps this with the command, so that another instance can resume the wait.
   */
  replyPoint(): ReplyPoint {
    const reader = this.reader;
    if (reader === undefined) throw new Error('the client is not started');
    return { partition: reader.partition, from: reader.position.toString() };
  }

  /**
   * Waits for the answer to a command sent earlier, by this instance or another one that stopped
   * waiting (it died, or shut down): never a new call. The same command — same command_id, run, tool,
   * arguments and deadline, the same reply partition — is published again, in case the first publish
   * never landed (the boundary answers a command_id once, so a copy that did land changes nothing),
   * and the answer is read from the reply partition the command named, from where its sender's
   * reader stood when it sent it.
   */
  async resume(sent: SentCommand, options: ResumeOptions = {}): Promise<CallResult> {
    const { commandId, tool } = sent;
    const timeoutMs = Math.max(0, sent.deadlineAt - Date.now());
    const parent = options.traceparent === undefined ? undefined : contextOf({ traceparent: options.traceparent });
    const { span, context } = startCallSpan(tracer, `resume ${tool}`, parent, {
      tool,
      tenant: sent.tenant,
      run_id: sent.runId,
      command_id: commandId,
    });
    // First: a partition that cannot be read now fails the resume (its caller tries again later),
    // before anything is sent or waited for.
    let reader: ReplyReader;
    try {
      reader = await this.readerAt(sent.reply);
    } catch (error) {
      endSpan(span, { status: 'error' });
      throw error;
    }
    const command = wellFormedCommand({
      schema_version: 1,
      command_id: commandId,
      run_id: sent.runId,
      tenant: sent.tenant,
      tool,
      arguments: sent.rawArguments,
      sent_at: sent.sentAt,
      deadline_at: sent.deadlineAt,
    });
    let proof: Record<string, string>;
    try {
      proof = this.proofOf(command, sent.reply.partition, options.runKey);
    } catch (error) {
      endSpan(span, { status: 'error' });
      await reader.stop();
      throw error;
    }
    const settled = this.awaitAnswer(command.command_id, tool, timeoutMs, span, options);
    try {
      await this.sendWithin(
        settled,
        this.send(command, { ...this.headersOf(traceHeadersOf(context), String(sent.reply.partition)), ...proof }, options.signal),
      );
      return await settled;
    } finally {
      await reader.stop();
    }
  }

  /** The call's answer, or its deadline, or the caller's signal: whichever comes first. */
  private awaitAnswer(
    commandId: string,
    tool: string,
    timeoutMs: number,
    span: Span,
    options: { readonly onPending?: ((notice: PendingNotice) => void) | undefined; readonly signal?: AbortSignal | undefined },
  ): Promise<CallResult> {
    return new Promise<CallResult>((resolve) => {
      const timer = setTimeout(() => {
        const error = toolError('TIMEOUT', `no result within ${timeoutMs} ms (client deadline)`, { details: { source: 'client' } });
        this.giveUp(commandId, tool, error);
      }, timeoutMs);
      this.waiters.set(commandId, { tool, resolve, onPending: options.onPending, timer, span });
      options.signal?.addEventListener(
        'abort',
        () => {
          const error = toolError('OPERATION_CANCELLED', 'the caller stopped waiting; a write already ordered still runs at most once', {
            details: { source: 'client' },
          });
          this.giveUp(commandId, tool, error);
        },
        { once: true },
      );
    });
  }

  /** A command's headers: its trace context (a fresh one when it has none) and the partition its answers go to. */
  private headersOf(trace: Record<string, string>, replyPartition: string): Record<string, string> {
    return {
      ...(trace['traceparent'] === undefined ? { traceparent: newTraceparent() } : trace),
      [REPLY_PARTITION_HEADER]: replyPartition,
    };
  }

  /** What this instance has read of the results topic, and how often a publish was tried again. */
  stats(): ClientStats {
    const reader = this.reader;
    if (reader === undefined) throw new Error('the client is not started');
    return {
      replyPartition: reader.partition,
      recordsRead: reader.recordsRead,
      deadLettered: reader.deadLettered,
      untrusted: reader.untrusted,
      publishRetries: this.publishRetries,
    };
  }

  /**
   * Publishes a command until the broker acknowledges it or the call's deadline passes. A failed
   * publish is ambiguous — the command may have been written — so it is sent again under the same
   * command_id: the boundary answers a command_id once, and the caller gets that one answer.
   */
  private async send(command: ToolCommand, headers: Record<string, string>, signal: AbortSignal | undefined): Promise<void> {
    const deadline = command.deadline_at ?? Number.POSITIVE_INFINITY;
    // Answered meanwhile (an earlier attempt did land), given up, cancelled, or the client closed.
    const settledOrCancelled = (): boolean => !this.waiters.has(command.command_id) || signal?.aborted === true;
    for (let attempt = 0; ; attempt += 1) {
      try {
        await this.publisher.publish('commands', command.tenant, command, headers);
        return;
      } catch (error) {
        if (!transientKafkaError(error)) {
          // Not the broker being away: a command that cannot be encoded, refused by an ACL, too
          // large. Sending it again cannot help; the caller gets the cause, not a deadline later.
          this.forget(command.command_id);
          throw error;
        }
        const backoff = Math.min(2_000, 100 * 2 ** attempt) * (0.5 + Math.random() / 2);
        if (settledOrCancelled()) return;
        if (Date.now() + backoff >= deadline) {
          const message = `the command could not be published before the call's deadline: ${(error as Error).message}`;
          this.giveUp(command.command_id, command.tool, toolError('TIMEOUT', message, { details: { source: 'client' } }));
          return;
        }
        this.publishRetries += 1;
        this.log.warn(
          { commandId: command.command_id, attempt: attempt + 1, err: { message: (error as Error).message } },
          'publishing a command failed; sending it again under the same command_id',
        );
        await new Promise((resolve) => setTimeout(resolve, backoff));
        if (settledOrCancelled()) return;
      }
    }
  }

  private forget(commandId: string): void {
    const waiter = this.waiters.get(commandId);
    if (waiter === undefined) return;
    clearTimeout(waiter.timer);
    this.waiters.delete(commandId);
    endSpan(waiter.span, { status: 'error' });
  }

  private giveUp(commandId: string, tool: string, error: ReturnType<typeof toolError>): void {
    const waiter = this.waiters.get(commandId);
    if (waiter === undefined) return;
    clearTimeout(waiter.timer);
    this.waiters.delete(commandId);
    const result: CallResult = { ok: false, commandId, tool, status: 'error', error };
    endCallSpan(waiter.span, result);
    waiter.resolve(result);
  }

  /**
   * The run's tools as MCP or OpenAI function-calling definitions, from the control API; the request
   * proves the run with its key (`runKey`, or the one `holdRunKey` was given). Throws RunKeyError without one.
   */
  async tools(runId: string, format: ToolDefinitionFormat = 'mcp', runKey?: string | RunKey): Promise<unknown[]> {
    const key = this.keyOf(runId, runKey);
    if (key === undefined) throw new RunKeyError('RUN_KEY_MISSING', `no key for run ${runId}: give the run_key its registration returned`);
    const response = await fetch(`${this.controlUrl}/runs/${encodeURIComponent(runId)}/tools?format=${format}`, {
      headers: { [RUN_PROOF_HEADER]: key.proveRequest(runId, Date.now()) },
    });
    if (!response.ok) throw new Error(`control API answered HTTP ${response.status} for the tools of run ${runId}`);
    const body = (await response.json()) as { tools: unknown[] };
    return body.tools;
  }

  /** Stops the client. A call still waiting resolves with OPERATION_CANCELLED; a write it ordered still runs at most once. */
  async close(): Promise<void> {
    const waiting = [...this.waiters];
    this.waiters.clear();
    for (const [commandId, waiter] of waiting) {
      clearTimeout(waiter.timer);
      const error = toolError(
        'OPERATION_CANCELLED',
        'the client closed while the call waited; a write already ordered still runs at most once',
        { details: { source: 'client' } },
      );
      const result: CallResult = { ok: false, commandId, tool: waiter.tool, status: 'error', error };
      endCallSpan(waiter.span, result);
      waiter.resolve(result);
    }
    await this.reader?.stop();
    await this.publisher.disconnect();
    await this.tracing.shutdown();
  }

  private settle(event: ToolResult): void {
    const waiter = this.waiters.get(event.command_id);
    if (waiter === undefined) return;
    if (event.status === 'pending_approval') {
      waiter.span.addEvent('pending_approval');
      if (event.pending !== null) waiter.onPending?.({ ...event.pending, commandId: event.command_id });
      return;
    }
    const result = toCallResult(event);
    if (result === undefined) return;
    clearTimeout(waiter.timer);
    this.waiters.delete(event.command_id);
    endCallSpan(waiter.span, result);
    this.log.debug({ commandId: event.command_id, tool: event.tool, status: event.status }, 'call settled');
    waiter.resolve(result);
  }
}

// Broker answers that the same command will get again however often it is sent.
const PERMANENT = new Set([
  'SASL_AUTHENTICATION_FAILED',
  'TOPIC_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'INVALID_RECORD',
  'INVALID_REQUIRED_ACKS',
]);

/** The broker's error code of a Kafka client's error, or of any it wraps, if one is permanent. */
function permanentType(error: unknown): string | undefined {
  return kafkaErrorCodes(error).find((code) => PERMANENT.has(code));
}

/** An error the Kafka client raised: @platformatic/kafka codes all of its errors PLT_KFK_…. */
function kafkaClientError(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('PLT_KFK_');
}

/**
 * A failure of the broker or the way to it, which a later attempt may not meet — as opposed to a
 * command that cannot be encoded or that the broker refuses for good (an ACL, the size limit, the
 * credentials).
 */
function transientKafkaError(error: unknown): boolean {
  return error instanceof Error && kafkaClientError(error) && permanentType(error) === undefined;
}

export function createClient(options: ClientOptions = {}): Promise<GatehouseClient> {
  return GatehouseClient.create(options);
}
