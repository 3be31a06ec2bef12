import { Partitioners } from 'kafkajs';
import type { ICustomPartitioner, IHeaders, Kafka, Message, Producer, TopicMessages } from 'kafkajs';
import { replyPartitionOf } from '@gatehouse/telemetry';
import { payloadFor } from './event-signing.js';
import type { EventSigner } from './event-signing.js';
import type { EventSerde } from './serde.js';
import type { EventByRole, TopicRole } from './topics.js';

export interface Outgoing<R extends TopicRole> {
  readonly key: string;
  readonly event: EventByRole[R];
  readonly headers?: IHeaders;
}

interface Pending {
  readonly topic: string;
  readonly messages: Message[];
  /** Each message's signing payload, signed when its batch is sent; absent when nothing is signed. */
  readonly payloads?: readonly Buffer[];
  readonly bytes: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

// An idempotent kafkajs producer has one request in flight per broker: one record per request
// capped a service at ~1 event per round trip (≈1.2 ms idle, 3–5 ms loaded). Publishes that
// arrive while a request is in flight now share the next one.
const MAX_BATCH_ENTRIES = 1_000;
const MAX_BATCH_BYTES = 900 * 1024;

// Errors after which an idempotent producer's sequence numbers no longer match the broker's (a
// broker restart can leave a batch half-acknowledged): every later send fails the same way until
// the producer is replaced, which gets a new producer id from the broker.
const PRODUCER_STATE_LOST = new Set([
  'OUT_OF_ORDER_SEQUENCE_NUMBER',
  'UNKNOWN_PRODUCER_ID',
  'INVALID_PRODUCER_EPOCH',
  'INVALID_PRODUCER_ID_MAPPING',
]);
const SEND_ATTEMPTS = 3;

// kafkajs rolls a partition's sequence number back whenever a produce request throws, even when the
// broker did append it (the connection lost after the append, a timeout, an error on another
// partition of the same request). A later, different batch then goes out under the same sequence
// numbers, and a broker that holds a batch with the same first and last sequence takes it for a
// retry of that one: it acknowledges it with the old offsets and drops it. So a producer whose send
// failed sends nothing more: the next send first replaces it (a new producer id, new sequences).

// What the signature headers add to a signed record at most (a signature, a key id and a path of
// six hashes), counted against MAX_BATCH_BYTES before they exist.
const SIGNATURE_HEADER_BYTES = 400;

/** True when `error` (or one it wraps) says the producer's idempotence state is gone. */
export function producerStateLost(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  const e = error as { type?: unknown; cause?: unknown; originalError?: unknown; errors?: unknown };
  if (typeof e.type === 'string' && PRODUCER_STATE_LOST.has(e.type)) return true;
  const wrapped = [e.cause, e.originalError, ...(Array.isArray(e.errors) ? (e.errors as unknown[]) : [])];
  return wrapped.some((inner) => producerStateLost(inner, depth + 1));
}

/**
 * The header that names what a record is partitioned by when it is not its key. Execution orders
 * carry their command id: keyed by tenant (the executors' per-tenant fairness and the operators'
 * tools read the key), they are spread over partitions call by call, so every partition, and so
 * every executor, gets an even share of the calls whatever the mix of tenants.
 */
export const PARTITION_KEY_HEADER = 'gatehouse-partition-key';

/** What a record of `role` is partitioned by, when it is not the record key. */
function partitionKeyOf<R extends TopicRole>(role: R, event: EventByRole[R]): string | undefined {
  return role === 'execute' ? (event as EventByRole['execute']).command_id : undefined;
}

function headerText(value: IHeaders[string]): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  if (first === undefined) return undefined;
  return typeof first === 'string' ? first : first.toString('utf8');
}

/**
 * Kafka's default partitioner (Java-compatible murmur2), over the record's partition key header
 * when it has one and its key otherwise, except for results that carry a reply partition: those go
 * to the partition the asking agent-runtime instance reads, so each instance reads its own answers
 * rather than everyone's. A reply partition the topic does not have is ignored (the key decides),
 * so a hostile or stale header can only cost reads, never an answer.
 */
export function replyAwarePartitioner(resultsTopic: string): ICustomPartitioner {
  return () => {
    const byKey = Partitioners.DefaultPartitioner();
    return (args) => {
      if (args.topic === resultsTopic) {
        const partition = replyPartitionOf(args.message.headers);
        if (partition !== undefined && args.partitionMetadata.some((p) => p.partitionId === partition)) return partition;
      }
      const spread = args.message.headers === undefined ? undefined : headerText(args.message.headers[PARTITION_KEY_HEADER]);
      if (spread !== undefined && spread.length > 0) return byKey({ ...args, message: { ...args.message, key: spread } });
      return byKey(args);
    };
  };
}

/**
 * Typed, idempotent publishing of Gatehouse events (acks from all in-sync replicas). Every
 * publish resolves once its own records are acknowledged; concurrent publishes are batched. A
 * producer whose idempotence state the broker no longer accepts is replaced, and the batch sent
 * again (consumers of every Gatehouse topic tolerate the duplicate this can make).
 */
export class EventPublisher {
  private queue: Pending[] = [];
  private flushing = false;
  private current: Producer;
  private replacing: Promise<void> | undefined;
  /** The current producer's last send failed: its sequence numbers may be reused, so it is replaced before the next send. */
  private suspect = false;
  /** How many times the producer was replaced (for logs and tests). */
  replacements = 0;

  private constructor(
    private readonly kafka: Kafka,
    producer: Producer,
    private readonly serde: EventSerde,
    private readonly signer: EventSigner | undefined,
  ) {
    this.current = producer;
  }

  /**
   * `signer`: the publishing service's key. Every order, approval request, decision and result it
   * publishes is signed with it (with the headers it travels with), so readers can tell it from a forgery.
   */
  static async connect(kafka: Kafka, serde: EventSerde, signer?: EventSigner): Promise<EventPublisher> {
    const producer = EventPublisher.newProducer(kafka, serde.topics.results);
    await producer.connect();
    return new EventPublisher(kafka, producer, serde, signer);
  }

  private static newProducer(kafka: Kafka, resultsTopic: string): Producer {
    return kafka.producer({ idempotent: true, allowAutoTopicCreation: false, createPartitioner: replyAwarePartitioner(resultsTopic) });
  }

  /** The producer in use now; it changes when one is replaced, so do not keep it. */
  get producer(): Producer {
    return this.current;
  }

  /** Sends records as they are (already encoded) through the same batches, e.g. to a DLQ. */
  async sendRaw(topic: string, messages: Message[]): Promise<void> {
    if (messages.length === 0) return;
    let bytes = 0;
    for (const m of messages) bytes += m.value === null ? 0 : Buffer.byteLength(m.value);
    await this.enqueue(topic, messages, bytes);
  }

  async publish<R extends TopicRole>(role: R, key: string, event: EventByRole[R], headers?: IHeaders): Promise<void> {
    await this.publishMany(role, [headers === undefined ? { key, event } : { key, event, headers }]);
  }

  /** Encodes now (a bad event throws here) and resolves when the records are acknowledged. */
  async publishMany<R extends TopicRole>(role: R, entries: readonly Outgoing<R>[]): Promise<void> {
    if (entries.length === 0) return;
    let bytes = 0;
    const payloads: Buffer[] = [];
    const messages = entries.map((e) => {
      const value = this.serde.encode(role, e.event);
      bytes += value.length;
      const partitionKey = partitionKeyOf(role, e.event);
      const headers = partitionKey === undefined ? e.headers : { ...e.headers, [PARTITION_KEY_HEADER]: partitionKey };
      // Signed as its batch is sent, with whatever else shares the produce request (one signature).
      const payload = this.signer === undefined ? undefined : payloadFor(role, e.event, headers);
      if (payload !== undefined) {
        payloads.push(payload);
        bytes += SIGNATURE_HEADER_BYTES;
      }
      return { key: e.key, value, headers: { ...headers } };
    });
    await this.enqueue(this.serde.topics[role], messages, bytes, payloads.length === 0 ? undefined : payloads);
  }

  private enqueue(topic: string, messages: Message[], bytes: number, payloads?: readonly Buffer[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ topic, messages, bytes, ...(payloads === undefined ? {} : { payloads }), resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  async disconnect(): Promise<void> {
    await this.replacing?.catch(() => undefined);
    await this.current.disconnect();
  }

  private async send(topicMessages: TopicMessages[]): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      // Throws while the broker is away (the batch fails, its callers retry); stays suspect until replaced.
      if (this.suspect) {
        await this.replaceProducer();
        this.suspect = false;
      }
      try {
        await this.current.sendBatch({ acks: -1, topicMessages });
        return;
      } catch (error) {
        // Whatever the error, this batch may be in the log: never reuse its sequence numbers.
        this.suspect = true;
        if (attempt >= SEND_ATTEMPTS || !producerStateLost(error)) throw error;
      }
    }
  }

  private replaceProducer(): Promise<void> {
    this.replacing ??= (async () => {
      const old = this.current;
      const fresh = EventPublisher.newProducer(this.kafka, this.serde.topics.results);
      await fresh.connect();
      this.current = fresh;
      this.replacements += 1;
      await old.disconnect().catch(() => undefined);
    })().finally(() => {
      this.replacing = undefined;
    });
    return this.replacing;
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.takeBatch();
      this.sign(batch);
      const byTopic = new Map<string, Message[]>();
      for (const pending of batch) {
        const list = byTopic.get(pending.topic);
        if (list === undefined) byTopic.set(pending.topic, [...pending.messages]);
        else list.push(...pending.messages);
      }
      const topicMessages: TopicMessages[] = [...byTopic].map(([topic, messages]) => ({ topic, messages }));
      try {
        await this.send(topicMessages);
        for (const pending of batch) pending.resolve();
      } catch (error) {
        for (const pending of batch) pending.reject(error);
      }
    }
    this.flushing = false;
  }

  /**
   * Signs every signed record of a batch about to be sent: one signature per MAX_BATCH_LEAVES of
   * them. A batch sent again after its producer was replaced keeps the headers signed here.
   */
  private sign(batch: readonly Pending[]): void {
    if (this.signer === undefined) return;
    const payloads: Buffer[] = [];
    const messages: Message[] = [];
    for (const pending of batch) {
      if (pending.payloads === undefined) continue;
      payloads.push(...pending.payloads);
      messages.push(...pending.messages);
    }
    if (payloads.length === 0) return;
    const headers = this.signer.headersForBatch(payloads);
    messages.forEach((message, i) => Object.assign(message.headers as IHeaders, headers[i]));
  }

  private takeBatch(): Pending[] {
    let entries = 0;
    let bytes = 0;
    let count = 0;
    for (const pending of this.queue) {
      if (count > 0 && (entries + pending.messages.length > MAX_BATCH_ENTRIES || bytes + pending.bytes > MAX_BATCH_BYTES)) break;
      entries += pending.messages.length;
      bytes += pending.bytes;
      count += 1;
    }
    return this.queue.splice(0, count);
  }
}
