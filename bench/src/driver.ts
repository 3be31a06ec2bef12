import { randomUUID } from 'node:crypto';
import { EventSerde, RunKey, topicNames } from '@gatehouse/events';
import type { EventsConfig, ToolCommand } from '@gatehouse/events';
import { createLogger } from '@gatehouse/telemetry';
import type { Consumer, Kafka, Message, Producer } from 'kafkajs';
import { PAUSE_SESSION_TIMEOUT_MS } from './child-process.js';
import { kafkajsClient } from './kafkajs-client.js';
import type { BenchRun } from './stack.js';
import { median, summarize } from './stats.js';
import type { LatencySummary } from './stats.js';

/** How the driver reads what comes back: the relayed command itself (arm a) or a ToolResult. */
type AnswerKind = 'commands' | 'results';

export interface KafkaDriverSetup {
  readonly kind: 'kafka';
  readonly config: EventsConfig;
  readonly topicPrefix: string;
  readonly runs: readonly BenchRun[];
  readonly answers: AnswerKind;
}

export interface LoadSpec {
  readonly tool: string;
  /** Size of the `arguments` JSON text, in bytes. */
  readonly argumentBytes: number;
  readonly durationMs: number;
  /** How long to wait for the calls still in flight once sending stops; later answers count as never. */
  readonly drainMs: number;
  /** How much longer to wait, without counting, for a backlog to clear before the next load. */
  readonly settleMs: number;
  /** closed: keep `inFlight` calls outstanding; open: send `rate` calls per second on a fixed schedule. */
  readonly mode: { readonly kind: 'closed'; readonly inFlight: number } | { readonly kind: 'open'; readonly rate: number };
}

export interface LoadReport {
  readonly sent: number;
  /** Open loop: sending stopped early because half a second of calls was outstanding. */
  readonly saturated: boolean;
  /** Answers with status ok (of calls sent in this load). */
  readonly ok: number;
  /** Answers that were not ok, by error code. */
  readonly errors: Readonly<Record<string, number>>;
  /** Calls with no answer when the drain ended. */
  readonly unanswered: number;
  /** How long calls were sent for. */
  readonly windowMs: number;
  /** Ok answers per second, from the first send to the last ok answer (a slow system is not cut off by the window). */
  readonly throughput: number;
  /** From each command's sent_at to its answer's arrival; unanswered calls count as Infinity. */
  readonly latencyMs: LatencySummary;
  /**
   * Medians of the two halves of that latency for ToolResults: sent_at → completed_at (policy,
   * execute topic, executor) and completed_at → arrival (results topic, back to the client).
   */
  readonly stageMediansMs: { readonly toCompletion: number; readonly toClient: number } | null;
  /** The driver process's own CPU from the first send until the drain ends. */
  readonly cpu: ProcessCpu;
}

/** CPU of the driver process over a load (`process.cpuUsage()`: it runs nothing but the load generator). */
export interface ProcessCpu {
  readonly userMs: number;
  readonly systemMs: number;
  /** Answers counted in the load (ok or not). */
  readonly calls: number;
  /** (user + system) / calls. */
  readonly msPerCall: number;
}

/** Call when a load starts. */
export function cpuMark(): NodeJS.CpuUsage {
  return process.cpuUsage();
}

/** The CPU used since `start`, per answered call. */
export function cpuSince(start: NodeJS.CpuUsage, calls: number): ProcessCpu {
  const used = process.cpuUsage(start);
  const userMs = used.user / 1000;
  const systemMs = used.system / 1000;
  return { userMs, systemMs, calls, msPerCall: calls === 0 ? Number.NaN : (userMs + systemMs) / calls };
}

/** The `payload` that makes `{"seq":n,"payload":"…"}` about `argumentBytes` long. */
export function argumentPadding(argumentBytes: number): string {
  return 'x'.repeat(Math.max(0, argumentBytes - JSON.stringify({ seq: 1_000_000, payload: '' }).length));
}

interface Pending {
  readonly sentAt: number;
}

const logger = createLogger('bench-driver', { level: 'fatal' });

/**
 * The load generator of every arm, so ratios compare like with like: it encodes ToolCommands with
 * the arm's serde, produces them in batches (one produce request in flight), consumes the answers
 * topic and correlates answers by command_id.
 */
export class Driver {
  private readonly pending = new Map<string, Pending>();
  private readonly latencies: number[] = [];
  private readonly toCompletion: number[] = [];
  private readonly toClient: number[] = [];
  private readonly errors: Record<string, number> = {};
  private ok = 0;
  private lastOkAt = 0;
  private counting = true;
  private queue: Message[] = [];
  /** Each run's key, parsed once. */
  private readonly runKeys = new Map<string, RunKey>();
  private sending = false;
  private onAnswer: () => void = () => undefined;
  /** Called when the last pending call is answered (set while a drain waits for it). */
  private onEmpty: (() => void) | undefined;
  private seq = 0;
  private padding = '';
  private tool = '';

  private constructor(
    private readonly setup: KafkaDriverSetup,
    private readonly serde: EventSerde,
    private readonly producer: Producer,
    private readonly consumer: Consumer,
    private readonly prefix: string,
  ) {}

  static async start(setup: KafkaDriverSetup): Promise<Driver> {
    const topics = topicNames(setup.topicPrefix);
    const kafka: Kafka = kafkajsClient(setup.config, `bench-driver-${randomUUID().slice(0, 8)}`);
    const serde = new EventSerde({ registryUrl: setup.config.registryUrl, topics });
    await serde.registerAll();
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const consumer = kafka.consumer({
      groupId: `bench-driver-${randomUUID()}`,
      allowAutoTopicCreation: false,
      maxWaitTimeInMs: 50,
      sessionTimeout: PAUSE_SESSION_TIMEOUT_MS,
    });
    const driver = new Driver(setup, serde, producer, consumer, randomUUID().slice(0, 8));
    let onJoin: () => void = () => undefined;
    const joined = new Promise<void>((resolve) => (onJoin = resolve));
    consumer.on(consumer.events.GROUP_JOIN, () => onJoin());
    await consumer.connect();
    // The arm's topics are fresh: reading from the beginning misses nothing and replays nothing old.
    await consumer.subscribe({ topic: topics.results, fromBeginning: true });
    await consumer.run({
      partitionsConsumedConcurrently: 6,
      eachBatch: async ({ batch }) => {
        for (const message of batch.messages) await driver.receive(message.value);
      },
    });
    await joined;
    return driver;
  }

  async run(spec: LoadSpec): Promise<LoadReport> {
    this.pending.clear();
    this.latencies.length = 0;
    this.toCompletion.length = 0;
    this.toClient.length = 0;
    for (const code of Object.keys(this.errors)) delete this.errors[code];
    this.ok = 0;
    this.lastOkAt = 0;
    this.tool = spec.tool;
    this.padding = argumentPadding(spec.argumentBytes);
    let sent = 0;
    let saturated = false;
    this.counting = true;
    const cpuAtStart = cpuMark();
    const started = Date.now();
    const end = started + spec.durationMs;

    if (spec.mode.kind === 'closed') {
      const { inFlight } = spec.mode;
      this.onAnswer = () => {
        if (Date.now() < end) {
          this.enqueue(Date.now());
          sent += 1;
        }
      };
      for (let i = 0; i < inFlight; i += 1) this.enqueue(started);
      sent += inFlight;
      this.flush();
      await sleep(spec.durationMs);
    } else {
      // A fixed schedule, never paced by answers: call i is due at started + i / rate, and carries
      // that instant as sent_at, so any lateness of the driver or the system shows as latency.
      const { rate } = spec.mode;
      const total = Math.floor((rate * spec.durationMs) / 1000);
      // Past half a second of calls outstanding the latency target is lost many times over; going
      // on would only leave a backlog that slows every arm after this one.
      const saturatedAt = Math.max(256, rate / 2);
      this.onAnswer = () => undefined;
      while (sent < total) {
        if (this.pending.size > saturatedAt) {
          saturated = true;
          break;
        }
        const now = Date.now();
        while (sent < total && started + (sent * 1000) / rate <= now) {
          this.enqueue(Math.floor(started + (sent * 1000) / rate));
          sent += 1;
        }
        this.flush();
        await sleep(1);
      }
    }
    const windowMs = Date.now() - started;
    this.onAnswer = () => undefined;
    await this.untilAnswered(spec.drainMs);
    const cpu = cpuSince(cpuAtStart, this.latencies.length);
    const unanswered = this.pending.size;
    for (let i = 0; i < unanswered; i += 1) this.latencies.push(Number.POSITIVE_INFINITY);
    // Counted as never answered; still waited for (bounded), so the next load starts on an idle system.
    this.counting = false;
    await this.untilAnswered(spec.settleMs);
    this.pending.clear();
    return {
      sent,
      saturated,
      ok: this.ok,
      errors: { ...this.errors },
      unanswered,
      windowMs,
      throughput: this.ok === 0 ? 0 : (this.ok * 1000) / Math.max(1, this.lastOkAt - started),
      latencyMs: summarize(this.latencies),
      stageMediansMs: this.toClient.length === 0 ? null : { toCompletion: median(this.toCompletion), toClient: median(this.toClient) },
      cpu,
    };
  }

  /** Resolves when every pending call is answered, or after `ms` at the latest. */
  private untilAnswered(ms: number): Promise<void> {
    if (this.pending.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.onEmpty = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.onEmpty = done;
    });
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect();
    await this.producer.disconnect();
  }

  private enqueue(sentAt: number): void {
    const seq = this.seq++;
    const run = this.setup.runs[seq % this.setup.runs.length] as BenchRun;
    const commandId = `${this.prefix}-${seq}`;
    const command: ToolCommand = {
      schema_version: 1,
      command_id: commandId,
      run_id: run.runId,
      tenant: run.tenant,
      tool: this.tool,
      arguments: `{"seq":${seq},"payload":"${this.padding}"}`,
      sent_at: sentAt,
      deadline_at: sentAt + 60_000,
    };
    this.pending.set(commandId, { sentAt });
    // Proved as an agent runtime proves it: the run's key over the command (no reply partition: the driver reads every partition).
    const key = run.runKey === undefined ? undefined : this.keyOf(run.runKey);
    this.queue.push({
      key: run.tenant,
      value: this.serde.encode('commands', command),
      ...(key === undefined ? {} : { headers: key.prove(command, null) }),
    });
  }

  private keyOf(text: string): RunKey {
    let key = this.runKeys.get(text);
    if (key === undefined) {
      key = RunKey.parse(text);
      this.runKeys.set(text, key);
    }
    return key;
  }

  /** Sends everything queued in one produce request; one request in flight, so batches grow under load. */
  private flush(): void {
    if (this.sending || this.queue.length === 0) return;
    const messages = this.queue;
    this.queue = [];
    this.sending = true;
    this.producer
      .send({ topic: this.serde.topics.commands, acks: -1, messages })
      .catch((error: unknown) => logger.error({ err: error }, 'driver could not send'))
      .finally(() => {
        this.sending = false;
        this.flush();
      });
  }

  private async receive(value: Buffer | null): Promise<void> {
    const arrived = Date.now();
    let commandId: string;
    let status: string;
    let code = '';
    let completedAt: number | undefined;
    if (this.setup.answers === 'commands') {
      const decoded = await this.serde.decode('commands', value);
      if (!decoded.ok) return;
      commandId = decoded.value.command_id;
      status = 'ok';
    } else {
      const decoded = await this.serde.decode('results', value);
      if (!decoded.ok) return;
      commandId = decoded.value.command_id;
      status = decoded.value.status;
      code = decoded.value.error?.code ?? status;
      completedAt = decoded.value.completed_at;
    }
    const pending = this.pending.get(commandId);
    if (pending === undefined) return;
    this.pending.delete(commandId);
    if (this.pending.size === 0) this.onEmpty?.();
    if (!this.counting) return;
    this.latencies.push(arrived - pending.sentAt);
    if (completedAt !== undefined) {
      this.toCompletion.push(completedAt - pending.sentAt);
      this.toClient.push(arrived - completedAt);
    }
    if (status === 'ok') {
      this.ok += 1;
      this.lastOkAt = arrived;
    } else {
      this.errors[code] = (this.errors[code] ?? 0) + 1;
    }
    this.onAnswer();
    this.flush();
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
