import { createPublicKey, randomBytes } from 'node:crypto';
import type { ToolContract } from '@gatehouse/contracts';
import {
  AnswerScan,
  createKafka,
  EventPublisher,
  EventSerde,
  EventSigner,
  KafkaAdmin,
  keyRing,
  provisionTopics,
  publishContracts,
} from '@gatehouse/events';
import type { EventsConfig, KeyRole, SigningKey, TopicRole, Topics } from '@gatehouse/events';
import type { Logger } from '@gatehouse/telemetry';
import { withTeardown } from './teardown.js';

// Named through @gatehouse/events, the one package that touches the Kafka client.
type Kafka = ReturnType<typeof createKafka>;

/**
 * Whether a service publishes its answers in transactions: `auto` where the topics they go to are
 * replicated (`EventRuntimeOptions.transactions`), `off` never (GATEHOUSE_ANSWER_TRANSACTIONS).
 */
export type AnswerTransactions = 'auto' | 'off';

export interface EventRuntimeOptions {
  readonly events: EventsConfig;
  readonly topics: Topics;
  /** The Kafka client id: `gatehouse-<service>-<instance>`. */
  readonly clientId: string;
  readonly logger: Logger;
  /** The service's own key: every order, approval request, decision and result it publishes is signed with it. */
  readonly signingKey?: SigningKey;
  /**
   * The topics this service publishes answers to in Kafka transactions (each committed only while
   * the claim it goes out under still holds), and how long the broker lets one stay open (default
   * the publisher's). Used only where every one of those topics is replicated (a replication factor
   * of at least 2); with one replica the service publishes them plainly: a single broker's
   * controlled shutdown leaves its partitions without a leader, and the transaction coordinator then
   * drops the commit markers of the transactions it completes (`packages/state/model/README.md`).
   */
  readonly transactions?: { readonly roles: readonly TopicRole[]; readonly timeoutMs?: number };
  /**
   * The tool versions this service serves: each is published in the schema registry if no service
   * has yet, and the service does not start (CONTRACT_CHANGED) if one differs from what was
   * published under its version (`publishContracts`).
   */
  readonly contracts?: readonly ToolContract[];
}

/** A service's connection to the event log: its topics provisioned, its schemas registered. */
export interface EventRuntime {
  readonly events: EventsConfig;
  readonly topics: Topics;
  readonly kafka: Kafka;
  /** Connected for the service's lifetime: it measures consumer lag and answers readiness. */
  readonly admin: KafkaAdmin;
  readonly serde: EventSerde;
  readonly publisher: EventPublisher;
  /** Whether the publisher sends `EventRuntimeOptions.transactions`' topics in transactions (they are replicated). */
  readonly transactional: boolean;
  /** Disconnects the publisher, then the admin. */
  readonly stop: () => Promise<void>;
}

/**
 * Connects a Kafka admin, creates any missing topic, registers every event schema and connects the
 * publisher. What it opened is closed again if a later step fails.
 */
// Each step of a start is bounded: a broker or registry that never answers makes the start fail,
// naming the step, rather than leave a process that is neither ready nor dead.
const START_STEP_TIMEOUT_MS = 60_000;

/** Runs one step of a start, logs how long it took, and fails it after `START_STEP_TIMEOUT_MS`. */
async function startStep<T>(logger: Logger, step: string, run: () => Promise<T>): Promise<T> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`start step "${step}" did not finish within ${START_STEP_TIMEOUT_MS} ms`)),
      START_STEP_TIMEOUT_MS,
    );
    timer.unref();
  });
  try {
    const value = await Promise.race([run(), bound]);
    logger.info({ step, ms: Date.now() - started }, 'start step done');
    return value;
  } finally {
    clearTimeout(timer);
  }
}

export async function startEventRuntime(options: EventRuntimeOptions): Promise<EventRuntime> {
  return withTeardown(async (teardown) => {
    const log = options.logger;
    const kafka = createKafka(options.events, options.clientId);
    const admin = await startStep(log, 'kafka admin connected', () => KafkaAdmin.connect(kafka));
    teardown.add(() => admin.close());
    await startStep(log, 'topics served', () => provisionTopics(admin, options.topics, options.events.topicSettings));
    const serde = new EventSerde({ registryUrl: options.events.registryUrl, topics: options.topics });
    await startStep(log, 'schemas registered', () => serde.registerAll());
    const contracts = options.contracts ?? [];
    if (contracts.length > 0) {
      const published = await startStep(log, 'contracts checked', () =>
        publishContracts({ registryUrl: options.events.registryUrl, topics: options.topics }, contracts),
      );
      const now = published.filter((p) => p.publishedNow).map((p) => p.address);
      if (now.length > 0) log.info({ tools: now }, 'contracts published');
    }
    const inTransactions = (options.transactions?.roles ?? []).map((role) => options.topics[role]);
    const replicas = inTransactions.length === 0 ? 0 : await startStep(log, 'replicas read', () => admin.leastReplicas(inTransactions));
    const transactional = replicas >= 2;
    const transactionTimeoutMs = options.transactions?.timeoutMs;
    const publisher = await startStep(log, 'publisher connected', () =>
      EventPublisher.connect(
        kafka,
        serde,
        options.signingKey === undefined ? undefined : new EventSigner(options.signingKey),
        transactional
          ? {
              // A part drawn anew by each process: a process never fences another's transactions.
              transactionalId: `${options.events.topicPrefix}${options.clientId}-${randomBytes(4).toString('hex')}`,
              transactionalTopics: inTransactions,
              ...(transactionTimeoutMs === undefined ? {} : { transactionTimeoutMs }),
            }
          : {},
      ),
    );
    teardown.add(() => publisher.disconnect());
    if (inTransactions.length > 0)
      log.info(
        { topics: inTransactions, replicas, transactional },
        transactional ? 'answers published in transactions' : 'answers published plainly: a topic has one replica',
      );
    return { events: options.events, topics: options.topics, kafka, admin, serde, publisher, transactional, stop: () => teardown.close() };
  });
}

/**
 * The read of the results topic a service makes before it publishes again an answer it may already
 * have published (a staged decision taken over, a decision the outbox retries). What it looks for
 * are answers this service published: signed by its own key, as `role`. One signed by another key
 * of the service (a rotation under way) is not found, and is published again.
 */
export function ownAnswerScan(runtime: EventRuntime, role: KeyRole, signingKey: SigningKey, logger: Logger): AnswerScan {
  return new AnswerScan({
    kafka: runtime.kafka,
    admin: runtime.admin,
    serde: runtime.serde,
    trust: { keys: keyRing({ [role]: new Map([[signingKey.keyId, createPublicKey(signingKey.privateKey)]]) }) },
    publisher: runtime.publisher,
    logger,
  });
}
