import type { OriginRecord } from './dead-letters.js';
import type { EventByRole, TopicRole } from './topics.js';
import type { RecordHeaders } from './wire-record.js';

// What every consumer of a Gatehouse topic hands its handler: the decoded event and where it was read.
// Both the one-at-a-time consumer (consumer.ts) and the parallel one it is built on use it.

/** Where a handled event was read: its topic, partition, offset, key, timestamp and headers. */
export interface ConsumedRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: string | null;
  readonly timestamp: string;
  readonly headers: RecordHeaders | undefined;
  /** The record as it arrived, for a handler that dead-letters an event it decoded but will not act on. */
  readonly origin?: OriginRecord;
}

export type EventHandler<R extends TopicRole> = (event: EventByRole[R], record: ConsumedRecord) => Promise<void>;
