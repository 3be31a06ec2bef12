import { createKafka, EventPublisher, EventSerde, EventSigner, provisionTopics } from '@gatehouse/events';
import type { EventsConfig, SigningKey, Topics } from '@gatehouse/events';
import type { Logger } from '@gatehouse/telemetry';
import { withTeardown } from './teardown.js';

// Named through @gatehouse/events, the one package that touches the Kafka client.
type Kafka = ReturnType<typeof createKafka>;
type Admin = ReturnType<Kafka['admin']>;

export interface EventRuntimeOptions {
  readonly events: EventsConfig;
  readonly topics: Topics;
  /** The Kafka client id: `gatehouse-<service>-<instance>`. */
  readonly clientId: string;
  readonly logger: Logger;
  /** The service's own key: every order, approval request, decision and result it publishes is signed with it. */
  readonly signingKey?: SigningKey;
}

/** A service's connection to the event log: its topics provisioned, its schemas registered. */
export interface EventRuntime {
  readonly events: EventsConfig;
  readonly topics: Topics;
  readonly kafka: Kafka;
  /** Connected for the service's lifetime: it measures consumer lag and answers readiness. */
  readonly admin: Admin;
  readonly serde: EventSerde;
  readonly publisher: EventPublisher;
  /** Disconnects the publisher, then the admin. */
  readonly stop: () => Promise<void>;
}

/**
 * Connects a Kafka admin, creates any missing topic, registers every event schema and connects the
 * publisher. What it opened is closed again if a later step fails.
 */
export async function startEventRuntime(options: EventRuntimeOptions): Promise<EventRuntime> {
  return withTeardown(async (teardown) => {
    const kafka = createKafka(options.events, options.clientId, options.logger);
    const admin = kafka.admin();
    await admin.connect();
    teardown.add(() => admin.disconnect());
    await provisionTopics(admin, options.topics, options.events.topicSettings);
    const serde = new EventSerde({ registryUrl: options.events.registryUrl, topics: options.topics });
    await serde.registerAll();
    const publisher = await EventPublisher.connect(kafka, serde, options.signingKey === undefined ? undefined : new EventSigner(options.signingKey));
    teardown.add(() => publisher.disconnect());
    return { events: options.events, topics: options.topics, kafka, admin, serde, publisher, stop: () => teardown.close() };
  });
}
