import { okResult } from '@gatehouse/events';
import type { EventSerde, ExecutionOrder, ToolCommand } from '@gatehouse/events';
import type { Consumer, Kafka, KafkaMessage, Message, Producer } from 'kafkajs';
import { PARTITIONS, startGroupAtBeginning } from './stack.js';

/** A hop's work on one record: `raw` copies it, `avro` decodes it and encodes the next event. */
export const RelayMode = { raw: 'raw', avro: 'avro' } as const;
export type RelayMode = (typeof RelayMode)[keyof typeof RelayMode];

export interface RunningRelay {
  readonly joined: Promise<void>;
  /** Stops fetching (the group membership stays) while another setup is measured; `resume` undoes it. */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

type Transform = (message: KafkaMessage) => Promise<Message>;

/**
 * The ceiling: plain kafkajs, two hops over Gatehouse's own topics (commands → execute → results),
 * each hop a consumer group that forwards every fetched batch in one produce request. The producer
 * is idempotent with acks from all in-sync replicas, as Gatehouse's publisher is.
 */
export async function startRelay(kafka: Kafka, serde: EventSerde, mode: RelayMode, label: string): Promise<RunningRelay> {
  const raw: Transform = (message) => Promise.resolve({ key: message.key, value: message.value });
  const toOrder: Transform = async (message) => {
    const decoded = await serde.decode('commands', message.value);
    if (!decoded.ok) throw new Error(`relay could not decode a command: ${decoded.reason}`);
    const command = decoded.value;
    return { key: command.tenant, value: serde.encode('execute', orderOf(command)) };
  };
  const toResult: Transform = async (message) => {
    const decoded = await serde.decode('execute', message.value);
    if (!decoded.ok) throw new Error(`relay could not decode an order: ${decoded.reason}`);
    const order = decoded.value;
    const seq = (JSON.parse(order.arguments) as { seq: number }).seq;
    const result = okResult(order, JSON.stringify({ seq, ok: true }), {
      operationId: order.order_id,
      argumentsSha256: order.arguments_sha256,
      durationMs: 0,
    });
    return { key: order.run_id, value: serde.encode('results', result) };
  };
  const hops = await Promise.all([
    startHop(kafka, `${label}-hop1`, serde.topics.commands, serde.topics.execute, mode === 'raw' ? raw : toOrder),
    startHop(kafka, `${label}-hop2`, serde.topics.execute, serde.topics.results, mode === 'raw' ? raw : toResult),
  ]);
  return {
    joined: Promise.all(hops.map((h) => h.joined)).then(() => undefined),
    pause: () => hops.forEach((h) => h.pause()),
    resume: () => hops.forEach((h) => h.resume()),
    stop: async () => {
      await Promise.all(hops.map((h) => h.stop()));
    },
  };
}

async function startHop(kafka: Kafka, groupId: string, from: string, to: string, transform: Transform): Promise<RunningRelay> {
  await startGroupAtBeginning(kafka, groupId, from);
  const producer: Producer = kafka.producer({ idempotent: true, allowAutoTopicCreation: false });
  await producer.connect();
  const consumer: Consumer = kafka.consumer({ groupId, allowAutoTopicCreation: false });
  let onJoin: () => void = () => undefined;
  const joined = new Promise<void>((resolve) => (onJoin = resolve));
  consumer.on(consumer.events.GROUP_JOIN, () => onJoin());
  await consumer.connect();
  await consumer.subscribe({ topic: from });
  await consumer.run({
    partitionsConsumedConcurrently: PARTITIONS,
    eachBatch: async ({ batch }) => {
      const messages = await Promise.all(batch.messages.map(transform));
      await producer.send({ topic: to, acks: -1, messages });
    },
  });
  return {
    joined,
    pause: () => consumer.pause([{ topic: from }]),
    resume: () => consumer.resume([{ topic: from }]),
    stop: async () => {
      await consumer.disconnect();
      await producer.disconnect();
    },
  };
}

/** What the policy service would route for a read: the command's fields, no checks. */
function orderOf(command: ToolCommand): ExecutionOrder {
  return {
    schema_version: 1,
    order_id: command.command_id,
    command_id: command.command_id,
    run_id: command.run_id,
    tenant: command.tenant,
    principal: 'agent:bench',
    environment: 'sandbox',
    tool: command.tool,
    effect: 'read',
    arguments: command.arguments,
    arguments_sha256: '0'.repeat(64),
    proposal_id: null,
    approval: null,
    idempotency_key: null,
    deadline_at: command.deadline_at,
    issued_at: Date.now(),
  };
}
