import type { ClusterMetadata, MessageToProduce, Producer } from '@platformatic/kafka';
import { replyPartitionOf } from '@gatehouse/telemetry';
import type { KafkaConnection } from './kafka-client.js';
import { payloadFor } from './event-signing.js';
import type { EventSigner } from './event-signing.js';
import type { EventSerde } from './serde.js';
import type { EventByRole, TopicRole } from './topics.js';
import { EventsError } from './events-error.js';
import { kafkaClientCodes, kafkaErrorCodes } from './kafka-errors.js';
import { wireClient } from './wire-client.js';
import type { WireClient } from './wire-client.js';
import type { OutboundRecord, RecordHeaders } from './wire-record.js';

/**
 * What must still hold when a transactional publisher commits a record: asked inside the transaction,
 * after the records are in the log. A record whose condition no longer holds is not committed; its
 * publish rejects with CLAIM_LOST. (A plain publisher has no transaction to hold it back, and ignores it.)
 */
export type PublishCondition = () => Promise<boolean>;

export interface Outgoing<R extends TopicRole> {
  readonly key: string;
  readonly event: EventByRole[R];
  readonly headers?: RecordHeaders;
  readonly holds?: PublishCondition;
}

interface Pending {
  readonly topic: string;
  readonly messages: OutboundRecord[];
  /** Each message's signing payload, signed when its batch is sent; absent when nothing is signed. */
  readonly payloads?: readonly Buffer[];
  readonly bytes: number;
  readonly holds?: PublishCondition;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

export interface PublisherOptions {
  /**
   * Publish every batch in one Kafka transaction under transactional ids that begin with this one
   * (then `~`, the id of the broker the transaction writes to, `~` and a lane number), which no other
   * live publisher may use: read_committed readers see a batch's records all at once or never, and a
   * publisher that connects under an id fences the earlier producers of that id and aborts their
   * open transaction. Absent: each batch is an idempotent send.
   */
  readonly transactionalId?: string;
  /**
   * How long the broker lets a transaction of this publisher stay open before it aborts it itself
   * (its publisher stalled, died, or waits on a partition whose leader is being elected). A publisher
   * whose commits are conditioned on holding a claim (`PublishCondition`) keeps this below the
   * claim's lease: a transaction then commits, or is aborted, while the claim it renewed is still its
   * own. Default `DEFAULT_TRANSACTION_TIMEOUT_MS`.
   */
  readonly transactionTimeoutMs?: number;
  /**
   * With `transactionalId`: the topics whose batches go out in transactions; every other topic's
   * are idempotent sends, as a plain publisher's. Absent: every topic's.
   */
  readonly transactionalTopics?: readonly string[];
}

/** Below the shortest lease a Gatehouse service conditions its commits on (the executor's, 5 s by default). */
const DEFAULT_TRANSACTION_TIMEOUT_MS = 4_000;

// Publishes that arrive while a produce request is in flight share the next one: one request per
// broker at a time, so batches grow with the load instead of the round trips.
const MAX_BATCH_ENTRIES = 1_000;
const MAX_BATCH_BYTES = 900 * 1024;

// Errors after which an idempotent producer's sequence numbers no longer match the broker's (a
// broker restart can leave a batch half-acknowledged): the same batch is sent again under a new
// producer id, at most SEND_ATTEMPTS times.
const PRODUCER_STATE_LOST = new Set([
  'OUT_OF_ORDER_SEQUENCE_NUMBER',
  'UNKNOWN_PRODUCER_ID',
  'INVALID_PRODUCER_EPOCH',
  'INVALID_PRODUCER_ID_MAPPING',
]);
const SEND_ATTEMPTS = 3;

// A failed produce request may still have been appended (the connection lost after the append, a
// timeout, an error on another partition of the same request). Its sequence numbers are therefore
// never given to another batch: the send after a failed one goes under a new producer id.

// What the signature headers add to a signed record at most (a signature, a key id and a path of
// six hashes), counted against MAX_BATCH_BYTES before they exist.
const SIGNATURE_HEADER_BYTES = 400;

/** True when `error` (or one it wraps) says the producer's idempotence state is gone. */
export function producerStateLost(error: unknown): boolean {
  return kafkaErrorCodes(error).some((code) => PRODUCER_STATE_LOST.has(code));
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

function headerText(value: RecordHeaders[string]): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  if (first === undefined) return undefined;
  return typeof first === 'string' ? first : first.toString('utf8');
}

/** Kafka's murmur2 over a key's bytes, as its Java client computes it. */
export type KeyHash = (key: string | Buffer) => number;

/** A record as the wire client takes it. */
type WireRecord = MessageToProduce<Buffer, Buffer, Buffer, Buffer>;

/**
 * The partition of a record on `topic` (of `partitions`): Kafka's default partitioner
 * (Java-compatible murmur2) over the record's partition key header when it has one and its key
 * otherwise, except for results that carry a reply partition: those go to the partition the asking
 * agent-runtime instance reads, so each instance reads its own answers rather than everyone's. A
 * reply partition the topic does not have is ignored (the key decides), so a hostile or stale
 * header can only cost reads, never an answer. Undefined for a record with no key at all: the
 * client then goes round the partitions.
 */
export function partitionFor(
  message: Pick<OutboundRecord, 'key' | 'headers'>,
  topic: string,
  resultsTopic: string,
  partitions: number,
  hash: KeyHash,
): number | undefined {
  if (topic === resultsTopic) {
    const reply = replyPartitionOf(message.headers);
    if (reply !== undefined && reply < partitions) return reply;
  }
  const spread = message.headers === undefined ? undefined : headerText(message.headers[PARTITION_KEY_HEADER]);
  const by = spread !== undefined && spread.length > 0 ? spread : message.key;
  if (by === null || by === undefined || by.length === 0) return undefined;
  return (hash(by) & 0x7fffffff) % partitions;
}

/** Header values as bytes, a repeated name repeated (distinct Buffer keys), as the broker stores them. */
function wireHeaders(headers: RecordHeaders | undefined): Map<Buffer, Buffer> {
  const wire = new Map<Buffer, Buffer>();
  if (headers === undefined) return wire;
  for (const name of Object.keys(headers)) {
    const value: unknown = headers[name];
    for (const one of Array.isArray(value) ? (value as unknown[]) : [value]) {
      if (typeof one === 'string' || Buffer.isBuffer(one)) wire.set(Buffer.from(name), Buffer.isBuffer(one) ? one : Buffer.from(one));
    }
  }
  return wire;
}

const bytesOf = (data: Buffer | string | null | undefined): Buffer | undefined =>
  data === null || data === undefined ? undefined : Buffer.isBuffer(data) ? data : Buffer.from(data);

// A transaction's first AddPartitionsToTxn meets CONCURRENT_TRANSACTIONS while the broker still
// writes the previous commit's markers, a millisecond or two: asked again at once rather than after
// the usual pause, which would cap a transactional publisher at a few batches a second. The pause
// doubles with each refusal (8 tries, about a quarter of a second in all), so a producer taking an
// id whose aborted transaction waits on a partition's new leader does not spin on it.
const transactionBusyRetryMs = (attempt: number): number => Math.min(128, 2 ** Math.max(0, attempt - 1));

// How long a transactional publisher waits at connect for its transaction coordinator: on a cluster
// where no transaction ran yet, the broker first creates its transaction state topic, which took
// several seconds on the project's two-core machine.
const COORDINATOR_WAIT_MS = 30_000;
const COORDINATOR_RETRY_MS = 250;
/**
 * How long a commit is asked again while its coordinator moves: long enough for an election and
 * for the new coordinator to abort the transaction if it timed out, so the commit ends known.
 */
const COMMIT_WAIT_MS = 30_000;
/**
 * A commit unanswered this long waits for something (its coordinator's election, a follower the
 * brokers have not yet dropped): its lane's queue goes to other lanes (`Lane.stalled`). A commit
 * takes milliseconds.
 */
const COMMIT_STALL_MS = 1_000;

// Answers of a transaction coordinator that is moving to another broker (its broker died, or is
// giving its transaction log up), or still writing the last markers; and a connection lost to it.
const COORDINATOR_MOVING = new Set([
  'COORDINATOR_NOT_AVAILABLE',
  'NOT_COORDINATOR',
  'COORDINATOR_LOAD_IN_PROGRESS',
  'CONCURRENT_TRANSACTIONS',
]);

export function coordinatorMoving(error: unknown): boolean {
  return kafkaErrorCodes(error).some((code) => COORDINATOR_MOVING.has(code)) || kafkaClientCodes(error).includes('PLT_KFK_NETWORK');
}

/**
 * Asks for a transaction's commit again while its coordinator moves (the wire client tries for a
 * second or two; an election takes 10–13 s), until the commit's outcome is known or `until` has
 * passed. Asked again by the same producer under the same epoch, a commit the broker already made
 * is answered as made, never made twice; a transaction the new coordinator aborted (past its
 * timeout) is answered PRODUCER_FENCED, which is also an outcome: nothing was committed. Past
 * `until` the last error is thrown: the commit may or may not have been made.
 */
async function commitThroughCoordinatorMoves(transaction: { commit(): Promise<unknown> }, until: number): Promise<void> {
  for (;;) {
    try {
      await transaction.commit();
      return;
    } catch (error) {
      if (!coordinatorMoving(error) || Date.now() >= until) throw error;
      await new Promise((resolve) => setTimeout(resolve, COORDINATOR_RETRY_MS));
    }
  }
}

/**
 * Two corrections to how the wire client runs `producer`'s transactions:
 * - It adds partitions with AddPartitionsToTxn version 3, the highest a client may use. Versions 4
 *   and later are the brokers' own (they verify a transaction for another broker) and need
 *   ClusterAction; the wire client takes the broker's highest version, so on a cluster that enforces
 *   ACLs every transaction failed with CLUSTER_AUTHORIZATION_FAILED. Kafka's own clients stop at 3.
 * - It asks InitProducerId for `transactionTimeoutMs`, where the wire client gives its request
 *   timeout (5 s), which is no bound a caller chose.
 */
function asTransactionalClient(producer: Producer, wire: WireClient, transactionTimeoutMs: number): void {
  const getApi = producer[wire.kGetApi].bind(producer);
  type Found = Parameters<Parameters<typeof getApi>[1]>[1];
  type Api = (connection: unknown, transactionalId: unknown, timeoutMs: unknown, ...rest: unknown[]) => void;
  const clientVersion = wire.addPartitionsToTxnV3.api as unknown as Found;
  Object.defineProperty(producer, wire.kGetApi, {
    value: (name: string, callback: Parameters<typeof getApi>[1]) => {
      if (name === 'AddPartitionsToTxn') return callback(null, clientVersion);
      if (name !== 'InitProducerId') return getApi(name, callback);
      return getApi(name, (error, api) => {
        if (error !== null && error !== undefined) return callback(error, api);
        const init = api as unknown as Api;
        const bounded: Api = (connection, transactionalId, _requestTimeoutMs, ...rest) =>
          init(connection, transactionalId, transactionTimeoutMs, ...rest);
        return callback(null, bounded as unknown as Found);
      });
    },
  });
}

/**
 * How many transactions a transactional publisher keeps open at once towards one broker. A
 * transactional id takes no new transaction until the broker has written the last one's markers,
 * so while one lane commits the next batch goes out under another lane's id.
 */
const LANES_PER_LEADER = 4;
/** Lanes a leader may have while some of them wait for a commit (`Lane.stalled`). */
const MAX_LANES_PER_LEADER = 8;

/**
 * Where a publisher's batches form and go out: a queue flushed one batch at a time, through its own
 * producer. A plain publisher has one lane. A transactional one has LANES_PER_LEADER lanes for each
 * broker that leads a partition it publishes to, each under its own transactional id, so a
 * transaction holds the records of one broker's partitions only: a broker that dies holds up the
 * transactions of the partitions it led, which wait for their new leader anyway, and no other
 * broker's, and batches stay as large as a plain publisher's.
 */
interface Lane {
  readonly queue: Pending[];
  flushing: boolean;
  /** A transactional lane's producer, made at its first batch; a plain lane sends through the publisher's own. */
  producer: Producer | undefined;
  /** The last send failed: the next one first takes a new producer id (a transactional lane: a new producer). */
  suspect: boolean;
  /** A transactional lane's id; undefined for the plain lane. */
  readonly transactionalId: string | undefined;
  /** Its commit has waited COMMIT_STALL_MS: new publishes go to another lane. */
  stalled: boolean;
}

const lane = (transactionalId?: string): Lane => ({
  queue: [],
  flushing: false,
  producer: undefined,
  suspect: false,
  transactionalId,
  stalled: false,
});

/**
 * Typed, idempotent publishing of Gatehouse events (acks from all in-sync replicas). Every
 * publish resolves once its own records are acknowledged; concurrent publishes are batched. A batch
 * the broker refused for lost idempotence state is sent again under a new producer id (consumers of
 * every Gatehouse topic tolerate the duplicate this can make). A transactional publisher
 * (`PublisherOptions.transactionalId`) sends each batch in a transaction instead, one broker's
 * partitions per transaction (`Lane`), and a batch that failed is never committed: its records are
 * aborted, and its callers publish again.
 */
export class EventPublisher {
  private readonly plain = lane();
  /** A transactional publisher's lanes, by the partition they publish to. */
  private readonly lanes = new Map<string, Lane>();
  /** How many times a new producer id was taken after a failed send (for logs and tests). */
  replacements = 0;

  private constructor(
    /** Sends a plain publisher's batches; asked for metadata by both kinds. */
    private readonly current: Producer,
    private readonly hash: KeyHash,
    private readonly serde: EventSerde,
    private readonly signer: EventSigner | undefined,
    /** A transactional publisher's producer maker, by lane id; undefined for a plain one. */
    private readonly transactional: ((laneId: string) => Promise<Producer>) | undefined,
    private readonly transactionalId: string | undefined,
    /** A transactional publisher's transaction timeout (`PublisherOptions.transactionTimeoutMs`). */
    private readonly transactionTimeoutMs?: number,
    /** The topics a transactional publisher sends in transactions; undefined: every topic. */
    private readonly transactionalTopics?: ReadonlySet<string>,
  ) {}

  /**
   * `signer`: the publishing service's key. Every order, approval request, decision and result it
   * publishes is signed with it (with the headers it travels with), so readers can tell it from a forgery.
   */
  static async connect(
    kafka: KafkaConnection,
    serde: EventSerde,
    signer?: EventSigner,
    options: PublisherOptions = {},
  ): Promise<EventPublisher> {
    const wire = await wireClient();
    const { Producer, ProduceAcks, murmur2 } = wire;
    const base = kafka.wireOptions();
    const plain = (): Producer => new Producer({ ...base, idempotent: true, acks: ProduceAcks.ALL, autocreateTopics: false });
    const transactionTimeoutMs = options.transactionTimeoutMs ?? DEFAULT_TRANSACTION_TIMEOUT_MS;
    const transactional = async (transactionalId: string): Promise<Producer> => {
      const deadline = Date.now() + COORDINATOR_WAIT_MS;
      for (;;) {
        const producer = new Producer({
          ...base,
          idempotent: true,
          acks: ProduceAcks.ALL,
          autocreateTopics: false,
          transactionalId,
          // Asks the broker for this id's producer as a newcomer does (-1, -1): it bumps the id's
          // epoch, fencing every earlier producer of it and aborting its open transaction.
          producerId: -1n,
          producerEpoch: -1,
          retryDelay: (client, operation, attempt, retries, error) =>
            kafkaErrorCodes(error).includes('CONCURRENT_TRANSACTIONS')
              ? transactionBusyRetryMs(attempt)
              : typeof base.retryDelay === 'function'
                ? base.retryDelay(client, operation, attempt, retries, error)
                : (base.retryDelay ?? 0),
        });
        asTransactionalClient(producer, wire, transactionTimeoutMs);
        try {
          // Takes the id now (an empty transaction, begun and dropped): earlier producers of it are
          // fenced and their open transaction aborted, so readers they held up go on at once.
          const transaction = await producer.beginTransaction();
          await transaction.cancel();
          return producer;
        } catch (error) {
          // A producer whose transaction failed to begin keeps it: never reused.
          await producer.close(true).catch(() => undefined);
          const refused = kafkaErrorCodes(error).some((code) => code.endsWith('_AUTHORIZATION_FAILED'));
          if (refused || Date.now() > deadline) throw error;
          await new Promise((resolve) => setTimeout(resolve, COORDINATOR_RETRY_MS));
        }
      }
    };
    const producer = plain();
    try {
      // Fails here, not at the first publish, when the brokers cannot be reached or refuse the principal.
      await producer.metadata({ topics: [] });
    } catch (error) {
      await producer.close(true).catch(() => undefined);
      throw error;
    }
    const { transactionalId } = options;
    if (transactionalId === undefined) return new EventPublisher(producer, murmur2, serde, signer, undefined, undefined);
    try {
      // Fails here, not at the first publish, when the principal may not use the id or no transaction
      // coordinator answers (on a new cluster, until the broker has made its transaction state topic).
      await (await transactional(transactionalId)).close();
    } catch (error) {
      await producer.close(true).catch(() => undefined);
      throw error;
    }
    const topics = options.transactionalTopics === undefined ? undefined : new Set(options.transactionalTopics);
    return new EventPublisher(producer, murmur2, serde, signer, transactional, transactionalId, transactionTimeoutMs, topics);
  }

  /** Whether this publisher's batches for `topic` go out in Kafka transactions. */
  inTransactions(topic: string): boolean {
    return this.transactional !== undefined && this.transactionalTopics?.has(topic) !== false;
  }

  /** Sends records as they are (already encoded) through the same batches, e.g. to a DLQ. */
  async sendRaw(topic: string, messages: OutboundRecord[]): Promise<void> {
    if (messages.length === 0) return;
    let bytes = 0;
    for (const m of messages) bytes += m.value === null ? 0 : Buffer.byteLength(m.value);
    await this.enqueue(topic, messages, bytes);
  }

  /** `holds`: what must still hold when the record is committed (a transactional publisher only; `PublishCondition`). */
  async publish<R extends TopicRole>(
    role: R,
    key: string,
    event: EventByRole[R],
    headers?: RecordHeaders,
    holds?: PublishCondition,
  ): Promise<void> {
    await this.publishMany(role, [
      { key, event, ...(headers === undefined ? {} : { headers }), ...(holds === undefined ? {} : { holds }) },
    ]);
  }

  /**
   * The partition `publish(role, key, event, headers)` sends the event to (undefined when the client
   * would choose: a record with no key), by the topic's partition count as the client knows it.
   */
  async partitionOf<R extends TopicRole>(
    role: R,
    key: string,
    event: EventByRole[R],
    headers?: RecordHeaders,
  ): Promise<number | undefined> {
    const topic = this.serde.topics[role];
    const metadata = await this.current.metadata({ topics: [topic] });
    const partitionKey = partitionKeyOf(role, event);
    const routed = partitionKey === undefined ? headers : { ...headers, [PARTITION_KEY_HEADER]: partitionKey };
    const partitions = metadata.topics.get(topic)?.partitionsCount ?? 1;
    return partitionFor(
      { key, ...(routed === undefined ? {} : { headers: routed }) },
      topic,
      this.serde.topics.results,
      partitions,
      this.hash,
    );
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
    const conditions = entries.flatMap((e) => (e.holds === undefined ? [] : [e.holds]));
    const holds: PublishCondition | undefined =
      conditions.length === 0 ? undefined : async () => (await Promise.all(conditions.map((c) => c()))).every(Boolean);
    await this.enqueue(this.serde.topics[role], messages, bytes, payloads.length === 0 ? undefined : payloads, holds);
  }

  private enqueue(
    topic: string,
    messages: OutboundRecord[],
    bytes: number,
    payloads?: readonly Buffer[],
    holds?: PublishCondition,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const pending: Pending = {
        topic,
        messages,
        bytes,
        ...(payloads === undefined ? {} : { payloads }),
        ...(holds === undefined ? {} : { holds }),
        resolve,
        reject,
      };
      if (!this.inTransactions(topic)) this.queueOn(this.plain, pending);
      else this.laneOf(pending).then((to) => this.queueOn(to, pending), reject);
    });
  }

  private queueOn(to: Lane, pending: Pending): void {
    to.queue.push(pending);
    if (!to.flushing) {
      to.flushing = true;
      setImmediate(() => void this.flush(to));
    }
  }

  /**
   * A transactional publisher's lane for a publish: one of the lanes of the broker that leads the
   * partition its records go to, the first that is not sending (or the one with the shortest queue).
   * A publish whose records go to several partitions (or to one the client chooses) has a lane of
   * its own, the publisher's id itself.
   */
  private async laneOf(pending: Pending): Promise<Lane> {
    const metadata = await this.current.metadata({ topics: [pending.topic] });
    const partitions = new Set(this.routedWith([pending], metadata)[0]);
    const [only] = partitions;
    if (partitions.size !== 1 || only === undefined) return this.laneNamed(`${this.transactionalId}`);
    const leader = metadata.topics.get(pending.topic)?.partitions[only]?.leader ?? -1;
    let chosen: Lane | undefined;
    let open = 0;
    // Lanes whose commit waits do not count: the next lanes are opened instead.
    for (let k = 0; k < MAX_LANES_PER_LEADER && open < LANES_PER_LEADER; k += 1) {
      const candidate = this.laneNamed(`${this.transactionalId}~${leader}~${k}`);
      if (candidate.stalled) continue;
      open += 1;
      if (!candidate.flushing) return candidate;
      if (chosen === undefined || candidate.queue.length < chosen.queue.length) chosen = candidate;
    }
    return chosen ?? this.laneNamed(`${this.transactionalId}~${leader}~0`);
  }

  private laneNamed(id: string): Lane {
    let found = this.lanes.get(id);
    if (found === undefined) {
      found = lane(id);
      this.lanes.set(id, found);
    }
    return found;
  }

  async disconnect(): Promise<void> {
    for (const { producer } of this.lanes.values()) await producer?.close();
    await this.current.close();
  }

  private async send(records: WireRecord[]): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      // Throws while the broker is away (the batch fails, its callers retry); stays suspect until it succeeds.
      if (this.plain.suspect) await this.newProducerId();
      try {
        await this.current.send({ messages: records });
        return;
      } catch (error) {
        // Whatever the error, this batch may be in the log: never send another under its sequence numbers.
        this.plain.suspect = true;
        if (attempt >= SEND_ATTEMPTS || !producerStateLost(error)) throw error;
      }
    }
  }

  /**
   * Registers a new producer id with the broker, its sequences from zero. The client drops its id
   * after a failed send anyway; asking for one here makes the rule hold whatever the client does.
   */
  private async newProducerId(): Promise<void> {
    await this.current.initIdempotentProducer({});
    this.plain.suspect = false;
    this.replacements += 1;
  }

  /** Each message of a batch as the wire client takes it, with the partition Gatehouse routes it to. */
  private async wireRecords(batch: readonly Pending[]): Promise<WireRecord[]> {
    const routed = await this.routed(batch);
    return batch.flatMap((pending, p) =>
      pending.messages.map((m, i): WireRecord => {
        const key = bytesOf(m.key);
        const value = bytesOf(m.value);
        const partition = routed[p]?.[i];
        return {
          topic: pending.topic,
          ...(key === undefined ? {} : { key }),
          ...(value === undefined ? {} : { value }),
          headers: wireHeaders(m.headers),
          ...(partition === undefined ? {} : { partition }),
        };
      }),
    );
  }

  /** The partition each message of each publish goes to (undefined where the client chooses). */
  private async routed(batch: readonly Pending[]): Promise<(number | undefined)[][]> {
    // The client's cached metadata (it refreshes it as it ages and when a leader moves).
    return this.routedWith(batch, await this.current.metadata({ topics: [...new Set(batch.map((p) => p.topic))] }));
  }

  private routedWith(batch: readonly Pending[], metadata: ClusterMetadata): (number | undefined)[][] {
    return batch.map((pending) => {
      const partitions = metadata.topics.get(pending.topic)?.partitionsCount ?? 1;
      return pending.messages.map((m) => m.partition ?? partitionFor(m, pending.topic, this.serde.topics.results, partitions, this.hash));
    });
  }

  private async flush(from: Lane): Promise<void> {
    while (from.queue.length > 0) {
      const batch = this.takeBatch(from.queue);
      try {
        this.sign(batch);
        const records = await this.wireRecords(batch);
        if (from.transactionalId === undefined) {
          await this.send(records);
          for (const pending of batch) pending.resolve();
        } else {
          for (const pending of await this.sendTransactionally(from, batch, records)) pending.resolve();
        }
      } catch (error) {
        for (const pending of batch) pending.reject(error);
      }
    }
    from.flushing = false;
  }

  /**
   * The batch in a transaction, tried again (under a new producer, which aborts the failed
   * transaction by fencing its producer) up to SEND_ATTEMPTS times, when the failed transaction is
   * known to have committed nothing and to have been this publisher's alone: it failed before its
   * commit was asked for, or it was fenced once open longer than its timeout (the broker aborted
   * it). A transaction fenced sooner was taken over by another producer under the same id, which
   * trying again would fence in turn. A commit whose outcome stayed unknown (its coordinator did
   * not come back within COMMIT_WAIT_MS) is not sent again: the broker may have made it. Answers the
   * publishes it committed; the others it has settled or queued again itself.
   */
  private async sendTransactionally(on: Lane, batch: readonly Pending[], records: WireRecord[]): Promise<readonly Pending[]> {
    for (let attempt = 1; ; attempt += 1) {
      const commit = { asked: false, began: Date.now() };
      try {
        return await this.sendInTransaction(on, batch, records, commit);
      } catch (error) {
        on.suspect = true;
        const fenced = kafkaErrorCodes(error).some((code) => code === 'PRODUCER_FENCED' || code === 'INVALID_PRODUCER_EPOCH');
        const timedOut = Date.now() - commit.began >= (this.transactionTimeoutMs ?? 0);
        if (attempt >= SEND_ATTEMPTS || (fenced && !timedOut) || (commit.asked && !fenced)) throw error;
      } finally {
        on.stalled = false;
      }
    }
  }

  /**
   * One transaction: the batch's records sent and acknowledged, then every condition asked, then
   * the commit. When a condition no longer holds nothing is committed: the transaction is aborted,
   * those publishes reject with CLAIM_LOST and the rest go first into the lane's next batch.
   */
  private async sendInTransaction(
    on: Lane,
    batch: readonly Pending[],
    records: WireRecord[],
    commit: { asked: boolean; began: number },
  ): Promise<readonly Pending[]> {
    if (on.suspect || on.producer === undefined) await this.replaceProducer(on);
    // The broker times the transaction from its first partition, added after this.
    commit.began = Date.now();
    const transaction = await (on.producer as Producer).beginTransaction();
    // One call at a time: the client mixes up concurrent calls inside one transaction.
    await transaction.send({ messages: records });
    const holding = await Promise.all(batch.map((pending) => (pending.holds === undefined ? Promise.resolve(true) : pending.holds())));
    if (holding.every(Boolean)) {
      commit.asked = true;
      const stalled = setTimeout(() => this.stall(on), COMMIT_STALL_MS);
      try {
        await commitThroughCoordinatorMoves(transaction, commit.began + COMMIT_WAIT_MS);
      } finally {
        clearTimeout(stalled);
      }
      return batch;
    }
    await transaction.abort();
    const lost = new EventsError('CLAIM_LOST', 'not published: the claim it goes out under is no longer this publisher’s');
    batch.forEach((pending, i) => {
      if (!holding[i]) pending.reject(lost);
    });
    // Signed again with the next batch: a signature covers the records it was made with.
    on.queue.unshift(...batch.filter((_, i) => holding[i]));
    return [];
  }

  /**
   * A lane whose commit waits (its coordinator moves, or the brokers have not yet dropped a dead
   * follower) takes no new publishes, and those queued behind the commit go to another lane of
   * their leader.
   */
  private stall(on: Lane): void {
    on.stalled = true;
    for (const pending of on.queue.splice(0)) this.laneOf(pending).then((to) => this.queueOn(to, pending), pending.reject);
  }

  /**
   * A transactional lane's new producer under its id; an earlier one, whose transaction failed, is
   * fenced by it (which aborts that transaction) and closed.
   */
  private async replaceProducer(on: Lane): Promise<void> {
    const old = on.producer;
    on.producer = await (this.transactional as (laneId: string) => Promise<Producer>)(on.transactionalId as string);
    on.suspect = false;
    if (old === undefined) return;
    await old.close(true).catch(() => undefined);
    this.replacements += 1;
  }

  /**
   * Signs every signed record of a batch about to be sent: one signature per MAX_BATCH_LEAVES of
   * them. A batch sent again after its producer was replaced keeps the headers signed here.
   */
  private sign(batch: readonly Pending[]): void {
    if (this.signer === undefined) return;
    const payloads: Buffer[] = [];
    const messages: OutboundRecord[] = [];
    for (const pending of batch) {
      if (pending.payloads === undefined) continue;
      payloads.push(...pending.payloads);
      messages.push(...pending.messages);
    }
    if (payloads.length === 0) return;
    const headers = this.signer.headersForBatch(payloads);
    messages.forEach((message, i) => Object.assign(message.headers as RecordHeaders, headers[i]));
  }

  private takeBatch(queue: Pending[]): Pending[] {
    let entries = 0;
    let bytes = 0;
    let count = 0;
    for (const pending of queue) {
      if (count > 0 && (entries + pending.messages.length > MAX_BATCH_ENTRIES || bytes + pending.bytes > MAX_BATCH_BYTES)) break;
      entries += pending.messages.length;
      bytes += pending.bytes;
      count += 1;
    }
    return queue.splice(0, count);
  }
}
