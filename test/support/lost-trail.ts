import { DLQ_HEADER, dlqTopicOf } from '@gatehouse/events';
import type { EventSerde, TopicRole } from '@gatehouse/events';
import type { TestKafka } from './kafkajs.js';
import { openLedger } from './topic-ledger.js';

/** Where a command the audit counts lost got to: the records that name it on each topic on its way. */
export interface LostTrail {
  readonly commandId: string;
  /** Records naming it on the commands, execute and results topics, as `partition:offset`. */
  readonly commands: string[];
  readonly orders: string[];
  readonly results: string[];
  /** Records naming it in a dead-letter topic, with the reason they were sent there. */
  readonly deadLetters: string[];
}

const ON_THE_WAY = ['commands', 'execute', 'results'] as const satisfies readonly TopicRole[];

/**
 * For a test that lost commands: reads every topic a command passes through, and their dead-letter
 * topics, from the beginning, and says for each lost command which ones hold it. It shows the stage
 * that dropped it (never published, never ordered, ordered but never answered, dead-lettered).
 */
export async function lostTrail(
  g: { readonly kafka: TestKafka; readonly serde: EventSerde; readonly label: string },
  commandIds: readonly string[],
): Promise<LostTrail[]> {
  if (commandIds.length === 0) return [];
  const wanted = new Set(commandIds);
  const found = new Map<string, { commands: string[]; orders: string[]; results: string[]; deadLetters: string[] }>(
    commandIds.map((id) => [id, { commands: [], orders: [], results: [], deadLetters: [] }]),
  );
  const field = { commands: 'commands', execute: 'orders', results: 'results' } as const;
  for (const role of ON_THE_WAY) {
    for (const dead of [false, true]) {
      const topic = dead ? dlqTopicOf(g.serde.topics[role]) : g.serde.topics[role];
      const ledger = await openLedger(
        g.kafka,
        topic,
        async (value) => {
          const decoded = await g.serde.decode(role, value);
          return decoded.ok ? decoded.value : undefined;
        },
        `${g.label}-trail-${role}${dead ? '-dlq' : ''}`,
      ).catch(() => undefined);
      // A topic that does not exist (a dead-letter topic nobody needed) holds nothing.
      if (ledger === undefined) continue;
      try {
        await ledger.caughtUp(30_000);
        for (const record of ledger.records) {
          const id = record.value?.command_id;
          if (id === undefined || !wanted.has(id)) continue;
          const at = `${record.partition}:${record.offset}`;
          const entry = found.get(id);
          if (entry === undefined) continue;
          if (dead) entry.deadLetters.push(`${topic} ${at} ${String(record.headers?.[DLQ_HEADER.reason] ?? '')}`);
          else entry[field[role]].push(at);
        }
      } finally {
        await ledger.stop();
      }
    }
  }
  return commandIds.map((commandId) => ({
    commandId,
    ...(found.get(commandId) ?? { commands: [], orders: [], results: [], deadLetters: [] }),
  }));
}
