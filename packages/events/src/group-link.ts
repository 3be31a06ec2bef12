import type { Consumer, ConsumerOptions, MessagesStream, StreamOptions } from '@platformatic/kafka';
import type { Logger } from '@gatehouse/telemetry';
import type { KafkaConnection } from './kafka-client.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { untilSucceeds } from './retry.js';
import { wireClient } from './wire-client.js';
import type { WireClient } from './wire-client.js';
import type { WireMessageOf } from './wire-record.js';

type WireConsumer = Consumer<Buffer, Buffer, Buffer, Buffer>;
type WireStream = MessagesStream<Buffer, Buffer, Buffer, Buffer>;

export interface GroupLinkOptions {
  readonly kafka: KafkaConnection;
  readonly groupId: string;
  readonly topic: string;
  readonly log: Logger;
  readonly sessionTimeoutMs?: number;
  /**
   * The one partition of the topic this member reads, for a group of one. The client gives a lone
   * member every partition, whatever its assignor says, so the assignment is narrowed to this one
   * as each join completes, before the stream reads by it.
   */
  readonly onlyPartition?: number;
  /** Where a stream starts reading; asked again each time the member joins afresh. */
  readonly start: (wire: WireClient) => Pick<StreamOptions, 'mode' | 'fallbackMode' | 'offsets'>;
  /**
   * The member's partitions of the topic after each completed join (`joined`), and none while it
   * joins afresh after a failure (not `joined`: what it held may come back to it or go elsewhere).
   */
  readonly assigned: (partitions: ReadonlySet<number>, joined: boolean) => void;
  readonly message: (message: WireMessageOf) => void;
}

/** A consumer group member's consumer and stream, rebuilt whole when either fails. */
export interface GroupLink {
  /** Settles when the member first receives its partition assignment. */
  readonly joined: Promise<void>;
  /** The consumer of the moment; undefined while it is being rebuilt. */
  current(): WireConsumer | undefined;
  /** Pauses fetching while the reader's buffer is full, and resumes it. */
  backpressure(full: boolean): void;
  /** Stops fetching for good (the member is stopping). */
  hold(): void;
  /** Closes the stream and leaves the group. */
  close(): Promise<void>;
}

/**
 * Joins the group and reads the topic. A stream or consumer that fails (its broker gone past its
 * retries, a rejoin refused, heartbeats stalled past the rebalance timeout) is closed, and the
 * member joins again with backoff, like a restarted process: it forgets its assignment, and the
 * partitions it is given next start again where `start` says.
 */
export async function openGroupLink(options: GroupLinkOptions): Promise<GroupLink> {
  const wire = await wireClient();
  let onJoin: () => void = () => undefined;
  const joined = new Promise<void>((resolve) => (onJoin = resolve));
  let consumer: WireConsumer | undefined;
  let stream: WireStream | undefined;
  let held = false;
  let full = false;
  let rebuilding: Promise<void> | undefined;
  const current = (): WireConsumer | undefined => consumer;
  const paused = (): boolean => held || full;

  const open = async (): Promise<void> => {
    const next: WireConsumer = new wire.Consumer(memberOptions(options));
    consumer = next;
    watch(next, options, { current: () => consumer === next, joined: onJoin, failed: (error) => fail(next, error) });
    const opened = await next.consume({ topics: [options.topic], ...options.start(wire) });
    stream = opened;
    opened.on('data', options.message);
    opened.on('error', (error: Error) => fail(next, error));
    if (paused()) opened.pause();
  };

  const fail = (failed: WireConsumer, error: unknown): void => {
    if (consumer !== failed || held || rebuilding !== undefined) return;
    options.log.warn({ err: error }, 'consumer failed; joining the group again');
    rebuilding = rebuild(failed).finally(() => (rebuilding = undefined));
  };

  const rebuild = async (failed: WireConsumer): Promise<void> => {
    options.assigned(new Set(), false);
    consumer = undefined;
    stream?.destroy();
    stream = undefined;
    await leaveAndClose(failed, options.log);
    await sleep(200);
    if (held) return;
    await untilSucceeds(() => open().catch(dropAndThrow), {
      firstDelayMs: 400,
      stopped: () => held,
      failed: (error) => options.log.warn({ err: error }, 'joining the group failed; trying again'),
    });
  };

  /** Closes the consumer a failed join left behind, and passes the failure on. */
  const dropAndThrow = async (error: unknown): Promise<never> => {
    const left = current();
    consumer = undefined;
    if (left !== undefined) await leaveAndClose(left, options.log);
    throw error;
  };

  // The first join fails its caller (a principal the group refuses, brokers out of reach).
  await open().catch((error: unknown) => {
    held = true;
    return dropAndThrow(error);
  });
  return {
    joined,
    current,
    backpressure: (isFull) => {
      full = isFull;
      if (paused()) stream?.pause();
      else stream?.resume();
    },
    hold: () => {
      held = true;
      stream?.pause();
    },
    close: async () => {
      held = true;
      await rebuilding;
      const closing = current();
      consumer = undefined;
      await stream?.close().catch(() => undefined);
      if (closing !== undefined) await leaveAndClose(closing, options.log);
    },
  };
}

/**
 * Leaves the group and closes the consumer's connections. A coordinator that refuses the leave
 * (it moved, or already expired the member) does not keep the member from stopping: the client
 * then forgets its membership and closes anyway, and the coordinator drops the member when its
 * session runs out, as it would a crashed process's.
 */
async function leaveAndClose(consumer: WireConsumer, log: Logger): Promise<void> {
  try {
    await consumer.close(true);
    return;
  } catch (error) {
    log.warn({ err: error }, 'leaving the group failed; closing without it');
  }
  consumer.memberId = null;
  await consumer.close(true).catch((error: unknown) => log.warn({ err: error }, 'closing the consumer failed'));
}

/** Passes the consumer's assignments on after each join, and reports it failed. */
function watch(
  consumer: WireConsumer,
  options: GroupLinkOptions,
  on: { readonly current: () => boolean; readonly joined: () => void; readonly failed: (error: unknown) => void },
): void {
  // The client sets `consumer.assignments` before it says the member joined.
  consumer.on('consumer:group:join', () => {
    if (!on.current()) return;
    const { topic, onlyPartition } = options;
    // The stream reads what `consumer.assignments` holds; its own join listener runs after this one.
    if (onlyPartition !== undefined) consumer.assignments = [{ topic, partitions: [onlyPartition] }];
    options.assigned(new Set(consumer.assignments?.find((a) => a.topic === topic)?.partitions ?? []), true);
    on.joined();
  });
  consumer.on('error', on.failed);
  consumer.on('consumer:heartbeat:stalled', (payload: { lastError?: unknown }) =>
    on.failed(payload.lastError ?? new Error('heartbeats stalled')),
  );
}

/** The member's client options: manual commits, and the session it asked for. */
function memberOptions(options: GroupLinkOptions): ConsumerOptions<Buffer, Buffer, Buffer, Buffer> {
  const session = options.sessionTimeoutMs ?? 30_000;
  return {
    ...options.kafka.wireOptions('through-elections'),
    groupId: options.groupId,
    autocommit: false,
    sessionTimeout: session,
    // A member that died mid-rebalance is waited for this long; ours rejoin at once.
    rebalanceTimeout: session + 5_000,
    heartbeatInterval: Math.min(3_000, Math.floor(session / 3)),
    // Round robin under both names: a group keeps working through a rolling upgrade from releases
    // whose members ran kafkajs, which calls the same assignor RoundRobinAssigner (version 0). A
    // group's members must share a protocol name, or the newcomers are refused.
    protocols: [
      { name: 'roundrobin', version: 1 },
      { name: 'RoundRobinAssigner', version: 0 },
    ],
  };
}
