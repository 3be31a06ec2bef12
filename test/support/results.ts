import { randomUUID } from 'node:crypto';
import type { ToolResult } from '@gatehouse/events';
import type { Consumer, IHeaders } from 'kafkajs';
import type { Gatehouse } from './gatehouse.js';
import { eventually } from './stack.js';

/** One record of gatehouse.results, decoded, with the exact bytes that were on the wire. */
export interface RecordedResult {
  readonly event: ToolResult;
  readonly raw: Buffer;
  readonly partition: number;
  readonly offset: string;
  /** The record's headers (its signature among them). */
  readonly headers: IHeaders | undefined;
}

/** Every record of a Gatehouse's results topic, from its beginning, grouped by command_id. */
export interface ResultLog {
  readonly all: readonly RecordedResult[];
  /** Records that did not decode (there should be none). */
  readonly undecodable: number;
  of(commandId: string): readonly RecordedResult[];
  /** Resolves with the first result of each id once all have arrived; rejects after `timeoutMs`. */
  waitFor(commandIds: readonly string[], timeoutMs?: number): Promise<Map<string, ToolResult>>;
  stop(): Promise<void>;
}

/** Starts reading the results topic from its beginning in a group of its own, as a downstream service would. */
export async function recordResults(g: Gatehouse): Promise<ResultLog> {
  const all: RecordedResult[] = [];
  const byCommand = new Map<string, RecordedResult[]>();
  let undecodable = 0;
  const consumer: Consumer = g.kafka.consumer({ groupId: `${g.label}-results-${randomUUID()}`, allowAutoTopicCreation: false });
  let onJoin: () => void = () => undefined;
  const joined = new Promise<void>((resolve) => (onJoin = resolve));
  consumer.on(consumer.events.GROUP_JOIN, () => onJoin());
  await consumer.connect();
  await consumer.subscribe({ topic: g.topics.results, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      if (message.value === null) return;
      const decoded = await g.serde.decode('results', message.value);
      if (!decoded.ok) {
        undecodable += 1;
        return;
      }
      const recorded = { event: decoded.value, raw: message.value, partition, offset: message.offset, headers: message.headers };
      all.push(recorded);
      const list = byCommand.get(decoded.value.command_id) ?? [];
      list.push(recorded);
      byCommand.set(decoded.value.command_id, list);
    },
  });
  await joined;
  return {
    all,
    get undecodable() {
      return undecodable;
    },
    of: (commandId) => byCommand.get(commandId) ?? [],
    async waitFor(commandIds, timeoutMs = 30_000) {
      await eventually(
        () => (commandIds.every((id) => byCommand.has(id)) ? true : undefined),
        timeoutMs,
        `results of ${commandIds.filter((id) => !byCommand.has(id)).length} of ${commandIds.length} commands`,
      );
      return new Map(commandIds.map((id) => [id, (byCommand.get(id) as RecordedResult[])[0]?.event as ToolResult]));
    },
    stop: () => consumer.disconnect(),
  };
}
