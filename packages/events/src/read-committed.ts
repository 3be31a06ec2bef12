import { tracingChannel } from 'node:diagnostics_channel';

/**
 * Reading at read_committed, as Kafka defines it, whatever the client leaves through.
 *
 * A broker answers a read_committed fetch with records up to the last stable offset and the list of
 * aborted transactions the fetched range overlaps; leaving out the aborted records is the reader's
 * job. The Kafka client Gatehouse uses keeps one aborted range per producer per fetch, so every
 * aborted transaction but a producer's last in a fetch reaches the application, and so does one whose
 * ABORT marker lies beyond the fetched bytes. Every fetch response passes here before the client's
 * stream hands its records on (the client's `consumer:fetches` diagnostics channel), and the batches
 * of aborted transactions are marked as control batches, which the stream skips while still moving
 * its position past them. The walk is Kafka's own: a producer is aborted from the first offset of an
 * aborted transaction the broker listed until its ABORT marker.
 *
 * For a consumer that asks (`trackFetchedPositions`), the same pass records per partition how far
 * the fetches have gone and the last record they let through, so a reader of a bounded range knows
 * it is done when the range ends with markers or aborted records, which are never delivered.
 */

const TRANSACTIONAL = 1 << 4;
const CONTROL = 1 << 5;
/** A control record's key: int16 version, int16 type; type 0 is ABORT, 1 COMMIT. */
const ABORT_TYPE = 0;

export interface WireBatch {
  readonly firstOffset: bigint;
  readonly lastOffsetDelta: number;
  attributes: number;
  readonly producerId: bigint;
  readonly records: readonly { readonly key?: Buffer | null; readonly offsetDelta: number }[];
}

export interface WireFetchedPartition {
  readonly partitionIndex: number;
  readonly abortedTransactions?: readonly { readonly producerId: bigint; readonly firstOffset: bigint }[] | null;
  readonly records?: readonly WireBatch[] | null;
}

interface WireFetchResponse {
  readonly responses: readonly { readonly topicId: string; readonly partitions: readonly WireFetchedPartition[] }[];
}

function isAbortMarker(batch: WireBatch): boolean {
  const key = batch.records[0]?.key;
  return key !== undefined && key !== null && key.length >= 4 && key.readInt16BE(2) === ABORT_TYPE;
}

/**
 * Marks the batches of `partition` that belong to aborted transactions as control batches, so they
 * are skipped; answers how many records it marked. Batches must be in offset order, as fetched.
 */
export function skipAbortedBatches(partition: WireFetchedPartition): number {
  const batches = partition.records ?? [];
  const aborted = [...(partition.abortedTransactions ?? [])].sort((a, b) =>
    a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0,
  );
  if (aborted.length === 0 || batches.length === 0) return 0;
  const abortedProducers = new Set<bigint>();
  let listed = 0;
  let skipped = 0;
  for (const batch of batches) {
    const lastOffset = batch.firstOffset + BigInt(batch.lastOffsetDelta);
    for (; listed < aborted.length && aborted[listed]!.firstOffset <= lastOffset; listed++)
      abortedProducers.add(aborted[listed]!.producerId);
    if ((batch.attributes & CONTROL) !== 0) {
      if (isAbortMarker(batch)) abortedProducers.delete(batch.producerId);
      continue;
    }
    if ((batch.attributes & TRANSACTIONAL) !== 0 && abortedProducers.has(batch.producerId)) {
      batch.attributes |= CONTROL;
      skipped += batch.records.length;
    }
  }
  return skipped;
}

/** How far a consumer's fetches have gone on one partition. */
export interface FetchedPosition {
  /** The offset after the last batch fetched: every offset below it was delivered or skipped. */
  readonly next: bigint;
  /** The highest offset of a record let through for delivery, -1 when none was. */
  readonly lastDelivered: bigint;
}

const positions = new WeakMap<object, Map<string, FetchedPosition>>();
const positionKey = (topicId: string, partition: number): string => `${topicId}\u0000${partition}`;

/** From now on, records how far `client`'s fetches go (`fetchedPosition`); other consumers pay nothing for it. */
export function trackFetchedPositions(client: object): void {
  if (!positions.has(client)) positions.set(client, new Map());
}

function recordPositions(mine: Map<string, FetchedPosition>, response: WireFetchResponse): void {
  for (const topic of response.responses) {
    for (const partition of topic.partitions) {
      const batches = partition.records ?? [];
      const last = batches.at(-1);
      if (last === undefined) continue;
      let lastDelivered = -1n;
      for (const batch of batches) {
        const lastRecord = batch.records.at(-1);
        if ((batch.attributes & CONTROL) === 0 && lastRecord !== undefined)
          lastDelivered = batch.firstOffset + BigInt(lastRecord.offsetDelta);
      }
      const key = positionKey(topic.topicId, partition.partitionIndex);
      const before = mine.get(key);
      const next = last.firstOffset + BigInt(last.lastOffsetDelta) + 1n;
      mine.set(key, {
        next: before === undefined || next > before.next ? next : before.next,
        lastDelivered: before === undefined || lastDelivered > before.lastDelivered ? lastDelivered : before.lastDelivered,
      });
    }
  }
}

/** Where `client`'s fetches stand on a partition (by topic id), once it has fetched any of it. */
export function fetchedPosition(client: object, topicId: string, partition: number): FetchedPosition | undefined {
  return positions.get(client)?.get(positionKey(topicId, partition));
}

interface FetchContext {
  readonly client?: object;
  readonly result?: WireFetchResponse;
}

let installed = false;

/** Puts the pass above on every fetch of this process's Kafka consumers; once per process. */
export function installReadCommitted(): void {
  if (installed) return;
  installed = true;
  tracingChannel('plt:kafka:consumer:fetches').subscribe({
    start: () => undefined,
    end: () => undefined,
    asyncStart: (message) => {
      const { client, result } = message as FetchContext;
      if (result === undefined) return;
      for (const topic of result.responses) for (const partition of topic.partitions) skipAbortedBatches(partition);
      const mine = client === undefined ? undefined : positions.get(client);
      if (mine !== undefined) recordPositions(mine, result);
    },
    asyncEnd: () => undefined,
    error: () => undefined,
  });
}
