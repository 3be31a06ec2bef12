import type { Logger } from '@gatehouse/telemetry';
import type { ToolResult } from './event-types.js';
import type { KafkaAdmin } from './kafka-admin.js';
import type { KafkaConnection } from './kafka-client.js';
import type { EventPublisher } from './publisher.js';
import { readRanges } from './range-reader.js';
import { checkRecord } from './record-trust.js';
import type { RecordTrust } from './record-trust.js';
import type { EventSerde } from './serde.js';
import type { RecordHeaders } from './wire-record.js';

/**
 * What the results topic says of an answer about to be published again:
 * - `published`: a record of this very answer (not another answer to its command), signed by a key
 *   the reader trusts, is on it;
 * - `absent`: none is, in the stretch of the partition the answer can lie in;
 * - `unscanned`: that stretch was not read (longer than the scan reads, or no partition to read):
 *   the caller publishes as it would without a scan.
 */
export type AnswerScanVerdict = 'published' | 'absent' | 'unscanned';

/**
 * Whether a record is this answer: a command may have more than one result on the topic (a
 * `pending` notice, then its final answer; `OUTCOME_UNKNOWN`, then an operator's resolution), and
 * a repeated answer is the same answer, down to when it completed.
 */
function sameAnswer(wanted: ToolResult, read: ToolResult): boolean {
  return (
    read.command_id === wanted.command_id &&
    read.run_id === wanted.run_id &&
    read.status === wanted.status &&
    Number(read.completed_at) === Number(wanted.completed_at) &&
    read.operation_id === wanted.operation_id &&
    (read.error?.code ?? null) === (wanted.error?.code ?? null)
  );
}

/** The consumer groups of answer scans, one throwaway group per read: `<results topic>.scan-<uuid>`. */
export function answerScanGroupPrefix(resultsTopic: string): string {
  return `${resultsTopic}.scan-`;
}

export interface AnswerScanOptions {
  readonly kafka: KafkaConnection;
  readonly admin: KafkaAdmin;
  readonly serde: EventSerde;
  /** Only records a trusted key signed count as published: a forged record never silences the real answer. */
  readonly trust: RecordTrust;
  /** The publisher whose routing says which results partition an answer goes to. */
  readonly publisher: Pick<EventPublisher, 'partitionOf'>;
  readonly logger: Logger;
  /** How far before an answer's `completed_at` its record may be stamped (clocks, batching); default 60 s. */
  readonly marginMs?: number;
  /** The most records one read goes through; a longer stretch is `unscanned`. Default 200,000. */
  readonly maxRecords?: number;
  /** How long one read may take before it fails (the caller's delivery is then retried); default 30 s. */
  readonly timeoutMs?: number;
}

interface Wanted {
  readonly answer: ToolResult;
  readonly resolve: (verdict: AnswerScanVerdict) => void;
  readonly reject: (error: unknown) => void;
}

const DEFAULT_MARGIN_MS = 60_000;
const DEFAULT_MAX_RECORDS = 200_000;
const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * Reads the results topic for answers already out, before a staged answer is published again by
 * whoever took its command over. An answer is staged before it is published and marked published
 * after: an owner that dies between the two leaves no trace of having published but the record
 * itself. The scan reads the stretch of the answer's partition from its `completed_at` (less a
 * margin) to the end, and finds the record there if it was published. Questions about one
 * partition that arrive while it is being read are answered together by the next read.
 */
export class AnswerScan {
  private readonly waiting = new Map<number, Wanted[]>();
  private readonly reading = new Set<number>();
  private readonly marginMs: number;
  private readonly maxRecords: number;
  private readonly timeoutMs: number;

  constructor(private readonly options: AnswerScanOptions) {
    this.marginMs = options.marginMs ?? DEFAULT_MARGIN_MS;
    this.maxRecords = options.maxRecords ?? DEFAULT_MAX_RECORDS;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** Whether `result`, published under `key` with `headers`, is on the results topic already. */
  async published(key: string, result: ToolResult, headers?: RecordHeaders): Promise<AnswerScanVerdict> {
    const partition = await this.options.publisher.partitionOf('results', key, result, headers);
    if (partition === undefined) return 'unscanned';
    return new Promise<AnswerScanVerdict>((resolve, reject) => {
      const queue = this.waiting.get(partition) ?? [];
      queue.push({ answer: result, resolve, reject });
      this.waiting.set(partition, queue);
      if (!this.reading.has(partition)) void this.drain(partition);
    });
  }

  private async drain(partition: number): Promise<void> {
    this.reading.add(partition);
    try {
      for (let wanted = this.waiting.get(partition); wanted !== undefined; wanted = this.waiting.get(partition)) {
        this.waiting.delete(partition);
        try {
          const found = await this.read(partition, wanted);
          for (const one of wanted) one.resolve(found === undefined ? 'unscanned' : found.has(one) ? 'published' : 'absent');
        } catch (error) {
          for (const one of wanted) one.reject(error);
        }
      }
    } finally {
      this.reading.delete(partition);
    }
  }

  /** The answers of `wanted` a trusted record on the partition is; undefined when the stretch is too long to read. */
  private async read(partition: number, wanted: readonly Wanted[]): Promise<Set<Wanted> | undefined> {
    const { serde, trust, logger } = this.options;
    const topic = serde.topics.results;
    const started = Date.now();
    const since = Math.min(...wanted.map((w) => Number(w.answer.completed_at))) - this.marginMs;
    const { from, end } = await this.options.admin.offsetsSince(topic, partition, since);
    if (end - from > BigInt(this.maxRecords)) {
      logger.warn(
        { partition, from: String(from), end: String(end), max: this.maxRecords },
        'answer scan: the stretch to read is too long; not read',
      );
      return undefined;
    }
    const byCommand = new Map<string, Wanted[]>();
    for (const one of wanted) byCommand.set(one.answer.command_id, [...(byCommand.get(one.answer.command_id) ?? []), one]);
    const found = new Set<Wanted>();
    let records = 0;
    await readRanges(this.options.kafka, [{ topic, partition, start: from, end }], {
      groupPrefix: answerScanGroupPrefix(topic),
      signal: AbortSignal.timeout(this.timeoutMs),
      record: async (_topic, _partition, record) => {
        records += 1;
        const decoded = await serde.decode('results', record.value);
        if (!decoded.ok) return;
        // Another answer to the same command (the pending notice before a write's final answer) is not this one.
        const matching = byCommand.get(decoded.value.command_id)?.filter((one) => !found.has(one) && sameAnswer(one.answer, decoded.value));
        if (matching === undefined || matching.length === 0) return;
        if (checkRecord('results', decoded.value, record.headers, trust)?.ok !== true) return;
        for (const one of matching) found.add(one);
      },
    });
    logger.info(
      { partition, from: String(from), end: String(end), records, asked: wanted.length, found: found.size, ms: Date.now() - started },
      'answer scan: read the results partition for answers already out',
    );
    return found;
  }
}
