import type { CallResult } from '@gatehouse/client';
import type { Run } from '@gatehouse/state';
import type { Gatehouse } from './gatehouse.js';

export interface Customer {
  readonly tenant: string;
  readonly id: string;
}

export const CallKind = { read: 'read', preview: 'preview', commit: 'commit' } as const;
export type CallKind = (typeof CallKind)[keyof typeof CallKind];

export const CallOutcome = {
  pending: 'pending',
  /** The client got a terminal result within its deadline. */
  answered: 'answered',
  /** Published, but the client's own deadline passed first: the results topic must still answer it. */
  clientTimeout: 'client_timeout',
  /** The client could not publish the command at all (the broker refused or was gone): not accepted. */
  notAccepted: 'not_accepted',
} as const;
export type CallOutcome = (typeof CallOutcome)[keyof typeof CallOutcome];

export interface LoadCall {
  readonly commandId: string;
  readonly kind: CallKind;
  readonly tool: string;
  readonly customer: Customer;
  readonly runId: string;
  /** When the client was asked (ms since the epoch). */
  readonly startedAt: number;
  /** When the client's call settled. */
  settledAt?: number;
  outcome: CallOutcome;
  answer?: CallResult;
  publishError?: string;
}

export interface MixedLoadOptions {
  /** Commands to send in all: one preview and one commit per customer, reads for the rest. */
  readonly calls: number;
  /** Each gets exactly one address change (preview → commit), so a second application shows as version 3. */
  readonly customers: readonly Customer[];
  /** Sequences (a read, or a preview then its commit) running at once. */
  readonly inFlight: number;
  /** The client's deadline for each call. */
  readonly timeoutMs: number;
  /** The run a new sequence uses; asked at the start of each, so runs can be replaced mid-load. */
  readonly runOf: (tenant: string) => Run;
  /** Calls sent per second at most, evenly spaced (as fast as the sequences go when unset). */
  readonly ratePerSecond?: number;
}

/** A deterministic shuffle (mulberry32), so a failing run can be replayed in the same order. */
function shuffle<T>(items: T[], seed: number): T[] {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = items.length - 1; i > 0; i -= 1) {
    const j = Math.floor(next() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

const isClientTimeout = (answer: CallResult): boolean =>
  !answer.ok && answer.error.code === 'TIMEOUT' && (answer.error.details as { source?: unknown } | null)?.source === 'client';

/**
 * Exactly `calls` commands through the client: reads (get_customer, list_open_orders) and writes
 * (preview_address_change then commit_address_change.v2 on its proposal), interleaved. A write whose
 * preview brings no proposal sends a read in place of its commit, so the count stays exact.
 */
export class MixedLoad {
  readonly calls = new Map<string, LoadCall>();
  /** The commit command of each customer, when one was sent. */
  readonly commitOf = new Map<string, string>();
  settled = 0;
  private sent = 0;
  /** When the first call went out, and how many have taken a turn since, for the pace. */
  private pacedFrom: number | undefined;
  private paced = 0;

  constructor(
    private readonly g: Gatehouse,
    private readonly options: MixedLoadOptions,
  ) {
    if (options.calls < options.customers.length * 2) throw new Error('not enough calls for one write per customer');
  }

  async run(): Promise<void> {
    const { calls, customers, inFlight } = this.options;
    const reads = calls - customers.length * 2;
    const jobs = shuffle(
      [
        ...customers.map((c) => ({ write: true, customer: c })),
        ...Array.from({ length: reads }, (_, i) => ({ write: false, customer: customers[(i * 7) % customers.length] as Customer })),
      ],
      calls,
    );
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let job = jobs[next++]; job !== undefined; job = jobs[next++]) {
        const run = this.options.runOf(job.customer.tenant);
        if (!job.write) {
          await this.read(job.customer, run);
          continue;
        }
        const previewed = await this.call(CallKind.preview, 'preview_address_change.v1', job.customer, run, {
          customer_id: job.customer.id,
          destination: { kind: 'new', line1: '9 Survivor Street', city: 'York', country: 'GB' },
        });
        if (previewed?.ok === true) {
          const proposalId = (previewed.result as { proposal_id: string }).proposal_id;
          await this.call(CallKind.commit, 'commit_address_change.v2', job.customer, run, { proposal_id: proposalId });
        } else {
          await this.read(job.customer, run);
        }
      }
    };
    await Promise.all(Array.from({ length: inFlight }, () => worker()));
  }

  /** The p99 of the client's latency (ms) over the calls that settled between `from` and `to`, or undefined when none did. */
  p99Between(from: number, to: number): number | undefined {
    const latencies = [...this.calls.values()]
      .filter((c) => c.settledAt !== undefined && c.settledAt >= from && c.settledAt <= to)
      .map((c) => (c.settledAt as number) - c.startedAt)
      .sort((a, b) => a - b);
    return latencies.length === 0 ? undefined : latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))];
  }

  /** The calls of one kind. */
  of(kind: CallKind): LoadCall[] {
    return [...this.calls.values()].filter((c) => c.kind === kind);
  }

  private read(customer: Customer, run: Run): Promise<CallResult | undefined> {
    return this.sent % 2 === 0
      ? this.call(CallKind.read, 'get_customer.v1', customer, run, { customer_id: customer.id })
      : this.call(CallKind.read, 'list_open_orders_for_customer.v1', customer, run, { customer_id: customer.id, page_size: 5 });
  }

  /** Waits for this call's turn when the load is paced: the n-th call goes out n / rate seconds after the first. */
  private async pace(): Promise<void> {
    const rate = this.options.ratePerSecond;
    if (rate === undefined) return;
    this.pacedFrom ??= Date.now();
    const due = this.pacedFrom + (this.paced++ * 1000) / rate;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }

  private async call(kind: CallKind, tool: string, customer: Customer, run: Run, args: unknown): Promise<CallResult | undefined> {
    await this.pace();
    const commandId = `${this.g.label}-${kind}-${this.sent++}-${customer.id}`;
    const call: LoadCall = { commandId, kind, tool, customer, runId: run.run_id, startedAt: Date.now(), outcome: CallOutcome.pending };
    this.calls.set(commandId, call);
    if (kind === CallKind.commit) this.commitOf.set(customer.id, commandId);
    try {
      const answer = await this.g.client.call(tool, args, {
        runId: run.run_id,
        tenant: customer.tenant,
        commandId,
        timeoutMs: this.options.timeoutMs,
      });
      call.answer = answer;
      call.outcome = isClientTimeout(answer) ? CallOutcome.clientTimeout : CallOutcome.answered;
      return isClientTimeout(answer) ? undefined : answer;
    } catch (error) {
      call.outcome = CallOutcome.notAccepted;
      call.publishError = error instanceof Error ? error.message : String(error);
      return undefined;
    } finally {
      call.settledAt = Date.now();
      this.settled += 1;
    }
  }
}
