import type { Catalog } from '@gatehouse/contracts';
import { isSignedRole, KafkaAdmin, readRanges, verifyEvent } from '@gatehouse/events';
import type { EventByRole, EventSerde, KafkaConnection, KeyRing, PartitionRange, RecordHeaders, Topics } from '@gatehouse/events';
import { buildTrace } from './build-trace.js';
import type { RunEvents } from './build-trace.js';
import { TraceError } from './trace-error.js';
import type { Trace } from './trace-format.js';

/** The topics a trace is made of. */
const ROLES = ['commands', 'results', 'approvalsRequested', 'approvalsDecided', 'execute'] as const;
type Role = (typeof ROLES)[number];

const DEFAULT_MAX_MS = 60_000;

export interface RecordTraceOptions {
  readonly kafka: KafkaConnection;
  readonly serde: EventSerde;
  readonly topics: Topics;
  readonly runId: string;
  /** The catalog the run was served by. */
  readonly catalog: Catalog;
  /**
   * Reading stops once every topic is read up to the end it had when recording began; with
   * `idleMs`, it then goes on until the ends stay put for `idleMs` (for a run still in flight).
   * `maxMs` (default 60 s) bounds the whole read: past it, RECORD_TIMEOUT.
   */
  readonly until?: { readonly idleMs?: number; readonly maxMs?: number };
  readonly recordedAt?: Date;
  /**
   * The keys of the services that sign what they publish (policy, approval, executors). An order,
   * approval request, decision or result that no key of a role that may issue it signed is left out:
   * a trace tells what Gatehouse did, not what someone who could write to its topics claims it did.
   * Commands are the agent's own and carry no signature.
   */
  readonly keys: KeyRing;
}

/** Each partition's first record and end (the next record's offset), by `topic:partition`. */
type Ends = ReadonlyMap<string, { readonly low: bigint; readonly high: bigint }>;

async function endsOf(kafka: KafkaConnection, topics: Topics): Promise<Ends> {
  const admin = await KafkaAdmin.connect(kafka);
  try {
    const ends = new Map<string, { low: bigint; high: bigint }>();
    for (const role of ROLES) {
      for (const p of await admin.topicOffsets(topics[role])) {
        const [low, high] = [BigInt(p.low), BigInt(p.high)];
        if (high > low) ends.set(`${topics[role]}:${p.partition}`, { low, high });
      }
    }
    return ends;
  } finally {
    await admin.close();
  }
}

const sameEnds = (a: Ends, b: Ends): boolean => a.size === b.size && [...a].every(([key, end]) => b.get(key)?.high === end.high);

/** What is left to read: from past what was read (the partition's first record before that) to its end in `ends`. */
function rangesTo(ends: Ends, read: ReadonlyMap<string, bigint>): PartitionRange[] {
  return [...ends].map(([key, { low, high }]) => {
    const at = key.lastIndexOf(':');
    const past = read.get(key);
    return {
      topic: key.slice(0, at),
      partition: Number(key.slice(at + 1)),
      start: past !== undefined && past > low ? past : low,
      end: high,
    };
  });
}

/**
 * Reads the run's events from the beginning of its topics with a throwaway consumer group that
 * never commits, then builds its redacted trace (`buildTrace`). Every record of those topics is
 * read and decoded, so the cost grows with the topics, not the run.
 */
export async function recordTrace(options: RecordTraceOptions): Promise<Trace> {
  const events = await readRunEvents(options);
  return buildTrace({
    runId: options.runId,
    catalog: options.catalog,
    events,
    ...(options.recordedAt === undefined ? {} : { recordedAt: options.recordedAt }),
  });
}

async function readRunEvents(options: RecordTraceOptions): Promise<RunEvents> {
  const { kafka, serde, topics, runId } = options;
  const maxMs = options.until?.maxMs ?? DEFAULT_MAX_MS;
  const idleMs = options.until?.idleMs ?? 0;
  const deadline = Date.now() + maxMs;
  const roleOf = new Map<string, Role>(ROLES.map((role) => [topics[role], role]));
  const sink: { [R in Role]: EventByRole[R][] } = { commands: [], results: [], approvalsRequested: [], approvalsDecided: [], execute: [] };
  // Where each partition's next read starts: past what was read, from the start of its log before that.
  const read = new Map<string, bigint>();

  // The signature and the arguments' hash; an order past its deadline was still issued.
  const vouchedFor = <R extends Role>(role: R, event: EventByRole[R], headers: RecordHeaders | undefined): boolean =>
    !isSignedRole(role) || verifyEvent(role, event as EventByRole[typeof role], headers, options.keys).ok;
  const take = async (topic: string, partition: number, value: Buffer | null, headers: RecordHeaders | undefined, offset: string) => {
    const role = roleOf.get(topic);
    read.set(`${topic}:${partition}`, BigInt(offset) + 1n);
    if (role === undefined) return;
    let decoded;
    try {
      decoded = await serde.decode(role, value);
    } catch (cause) {
      throw new TraceError('READ_FAILED', `a record of ${topic} could not be decoded`, { cause });
    }
    // Undecodable records are the DLQ's business; they belong to no run.
    if (decoded.ok && decoded.value.run_id === runId && vouchedFor(role, decoded.value, headers)) {
      (sink[role] as EventByRole[typeof role][]).push(decoded.value);
    }
  };
  const readUpTo = async (ends: Ends): Promise<void> => {
    const timeout = new AbortController();
    const timer = setTimeout(
      () => timeout.abort(new TraceError('RECORD_TIMEOUT', `topics of run ${runId} were not read to their ends within ${maxMs} ms`)),
      Math.max(0, deadline - Date.now()),
    );
    try {
      await readRanges(kafka, rangesTo(ends, read), {
        groupPrefix: 'gatehouse-trace-',
        signal: timeout.signal,
        record: (topic, partition, record) => take(topic, partition, record.value, record.headers, record.offset),
      });
    } finally {
      clearTimeout(timer);
    }
  };

  let ends = await endsOf(kafka, topics);
  await readUpTo(ends);
  while (idleMs > 0 && Date.now() + idleMs < deadline) {
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    const later = await endsOf(kafka, topics);
    if (sameEnds(later, ends)) break;
    ends = later;
    await readUpTo(ends);
  }
  return {
    commands: sink.commands,
    results: sink.results,
    approvalsRequested: sink.approvalsRequested,
    approvalsDecided: sink.approvalsDecided,
    orders: sink.execute,
  };
}
