// Arm (a′): the raw two-hop relay of relay.ts, with @platformatic/kafka in place of kafkajs. The
// bench measures it beside (a); Gatehouse itself talks to Kafka through @gatehouse/events only.
import { Consumer, MessagesStreamFallbackModes, MessagesStreamModes, ProduceAcks, Producer } from '@platformatic/kafka';
import type { Message, MessagesStream } from '@platformatic/kafka';
import type { Topics } from '@gatehouse/events';
import type { RunningRelay } from './relay.js';
import { config } from './stack.js';

/**
 * Records a hop holds before it pauses its stream: the client's own default read-ahead
 * (`highWaterMark`), so a slow produce bounds what is buffered as it does in the client.
 */
const MAX_PENDING = 1_024;

/**
 * The same two hops as arm (a) (commands → execute → results, copying key and value), each a
 * consumer group and an idempotent producer with acks from all in-sync replicas. Where kafkajs hands
 * over one fetched batch per partition and fetches again once every batch is forwarded, this
 * client's stream reads ahead; a hop forwards everything it has read since its last produce request
 * in one request, one request in flight, so batches grow under load as in the driver. Offsets are
 * committed once their records are acknowledged, as kafkajs' eachBatch does (there one commit per
 * partition batch, here one per produce request).
 */
export async function startPlatformaticRelay(topics: Topics, label: string): Promise<RunningRelay> {
  const hops = await Promise.all([
    startHop(`${label}-hop1`, topics.commands, topics.execute),
    startHop(`${label}-hop2`, topics.execute, topics.results),
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

async function startHop(groupId: string, from: string, to: string): Promise<RunningRelay> {
  // The local stack's plaintext listener, as the relay of arm (a) reaches it.
  const bootstrapBrokers = [...config.brokers];
  const producer = new Producer({
    clientId: `${groupId}-producer`,
    bootstrapBrokers,
    idempotent: true,
    acks: ProduceAcks.ALL,
    autocreateTopics: false,
  });
  const consumer = new Consumer({ clientId: `${groupId}-consumer`, groupId, bootstrapBrokers, autocommit: false, autocreateTopics: false });
  let onJoin: () => void = () => undefined;
  const joined = new Promise<void>((resolve) => (onJoin = resolve));
  consumer.once('consumer:group:join', () => onJoin());
  // The group is new: with no committed offset it starts at the beginning, so a record published
  // between the join and the first fetch is not skipped.
  const stream: MessagesStream<Buffer, Buffer, Buffer, Buffer> = await consumer.consume({
    topics: [from],
    mode: MessagesStreamModes.COMMITTED,
    fallbackMode: MessagesStreamFallbackModes.EARLIEST,
  });

  let pending: Message[] = [];
  let forwarding = false;
  const forward = async (): Promise<void> => {
    try {
      while (pending.length > 0) {
        const batch = pending;
        pending = [];
        if (stream.isPaused()) stream.resume();
        await producer.send({ messages: batch.map((m) => ({ topic: to, key: m.key, value: m.value })) });
        // One commit request for every partition in the batch (a message's own commit() sends one
        // each); no leader epoch (-1), as kafkajs commits.
        const lastOfPartition = new Map<number, Message>();
        for (const message of batch) lastOfPartition.set(message.partition, message);
        await consumer.commit({
          offsets: [...lastOfPartition.values()].map((m) => ({
            topic: from,
            partition: m.partition,
            offset: m.offset + 1n,
            leaderEpoch: -1,
          })),
        });
      }
    } finally {
      forwarding = false;
    }
  };
  stream.on('data', (message) => {
    pending.push(message);
    if (pending.length >= MAX_PENDING) stream.pause();
    if (forwarding) return;
    forwarding = true;
    // After this turn of the event loop: the stream emits a fetch response's records one by one,
    // all in the same turn, so the first produce request carries the whole response.
    setImmediate(() => {
      forward().catch((error: unknown) => stream.destroy(error instanceof Error ? error : new Error(String(error))));
    });
  });
  // A failed hop leaves calls unanswered, which the bench reports; this says why.
  stream.on('error', (error) => process.stderr.write(`relay ${groupId} stopped: ${error.message}\n`));

  return {
    joined,
    pause: () => stream.pause(),
    resume: () => stream.resume(),
    stop: async () => {
      await stream.close();
      await consumer.close();
      await producer.close();
    },
  };
}
