import { randomUUID } from 'node:crypto';
import type { Catalog } from '@gatehouse/contracts';
import { isSignedRole, verifyEvent } from '@gatehouse/events';
import type { EventByRole, EventSerde, KeyRing, Topics } from '@gatehouse/events';
import type { IHeaders, Kafka } from 'kafkajs';
import { buildTrace } from './build-trace.js';
import type { RunEvents } from './build-trace.js';
import { TraceError } from './trace-error.js';
import type { Trace } from './trace-format.js';

/** The topics a trace is made of. */
const ROLES = ['commands', 'results', 'approvalsRequested', 'approvalsDecided', 'execute'] as const;
type Role = (typeof ROLES)[number];

const DEFAULT_MAX_MS = 60_000;

export interface RecordTraceOptions {
  readonly kafka: Kafka;
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

type Ends = ReadonlyMap<string, bigint>;

async function endsOf(kafka: Kafka, topics: Topics): Promise<Ends> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const ends = new Map<string, bigint>();
    for (const role of ROLES) {
      for (const p of await admin.fetchTopicOffsets(topics[role])) {
        if (BigInt(p.high) > BigInt(p.low)) ends.set(`${topics[role]}:${p.partition}`, BigInt(p.high));
      }
    }
    return ends;
  } finally {
    await admin.disconnect();
  }
}

const sameEnds = (a: Ends, b: Ends): boolean => a.size === b.size && [...a].every(([key, end]) => b.get(key) === end);

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
  const next = new Map<string, bigint>();
  let failure: TraceError | undefined;
  let wake: () => void = () => undefined;

  // The signature and the arguments' hash; an order past its deadline was still issued.
  const vouchedFor = <R extends Role>(role: R, event: EventByRole[R], headers: IHeaders | undefined): boolean =>
    !isSignedRole(role) || verifyEvent(role, event as EventByRole[typeof role], headers, options.keys).ok;
  const take = async <R extends Role>(role: R, value: Buffer | null, headers: IHeaders | undefined): Promise<void> => {
    const decoded = await serde.decode(role, value);
    // Undecodable records are the DLQ's business; they belong to no run.
    if (decoded.ok && decoded.value.run_id === runId && vouchedFor(role, decoded.value, headers)) sink[role].push(decoded.value);
  };

  const groupId = `gatehouse-trace-${randomUUID()}`;
  const consumer = kafka.consumer({ groupId, allowAutoTopicCreation: false });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: ROLES.map((role) => topics[role]), fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ topic, partition, message }) => {
        const role = roleOf.get(topic);
        try {
          if (role !== undefined) await take(role, message.value, message.headers);
        } catch (cause) {
          failure ??= new TraceError('READ_FAILED', `a record of ${topic} could not be decoded`, { cause });
        }
        const key = `${topic}:${partition}`;
        const after = BigInt(message.offset) + 1n;
        if ((next.get(key) ?? -1n) < after) next.set(key, after);
        wake();
      },
    });

    const reached = (ends: Ends): boolean => [...ends].every(([key, end]) => (next.get(key) ?? -1n) >= end);
    const readUpTo = (ends: Ends): Promise<void> =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => {
            wake = () => undefined;
            reject(new TraceError('RECORD_TIMEOUT', `topics of run ${runId} were not read to their ends within ${maxMs} ms`));
          },
          Math.max(0, deadline - Date.now()),
        );
        wake = () => {
          if (failure === undefined && !reached(ends)) return;
          clearTimeout(timer);
          wake = () => undefined;
          if (failure === undefined) resolve();
          else reject(failure);
        };
        wake();
      });

    let ends = await endsOf(kafka, topics);
    await readUpTo(ends);
    while (idleMs > 0 && Date.now() + idleMs < deadline) {
      await new Promise((resolve) => setTimeout(resolve, idleMs));
      const later = await endsOf(kafka, topics);
      if (sameEnds(later, ends)) break;
      ends = later;
      await readUpTo(ends);
    }
  } finally {
    await consumer.disconnect();
    await deleteGroup(kafka, groupId);
  }
  return {
    commands: sink.commands,
    results: sink.results,
    approvalsRequested: sink.approvalsRequested,
    approvalsDecided: sink.approvalsDecided,
    orders: sink.execute,
  };
}

/** Best effort: the group committed nothing, and an undeleted one expires with the broker's retention. */
async function deleteGroup(kafka: Kafka, groupId: string): Promise<void> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    await admin.deleteGroups([groupId]);
  } catch {
    // Left to expire.
  } finally {
    await admin.disconnect();
  }
}
