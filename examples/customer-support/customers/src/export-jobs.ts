import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import type { Tables } from './db.js';
import type { Queryable } from './customer-repository.js';

export const EXPORT_STATES = {
  queued: 'queued',
  running: 'running',
  succeeded: 'succeeded',
  failed: 'failed',
  cancelled: 'cancelled',
} as const;
export type ExportState = (typeof EXPORT_STATES)[keyof typeof EXPORT_STATES];

export const EXPORT_FORMATS = { csv: 'csv', json: 'json' } as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[keyof typeof EXPORT_FORMATS];

export const CANCEL_OUTCOMES = {
  stopped: 'stopped',
  alreadyCompleted: 'already_completed',
  notInterruptible: 'not_interruptible',
} as const;
export type CancelOutcome = (typeof CANCEL_OUTCOMES)[keyof typeof CANCEL_OUTCOMES];

/** The last part of `running` (as a fraction of its duration) during which a job cannot be stopped. */
export const FINALIZING_FRACTION = 0.2;

export interface ExportJobView {
  readonly job_id: string;
  readonly customer_id: string;
  readonly format: ExportFormat;
  readonly state: ExportState;
  readonly progress: number;
  readonly interruptible: boolean;
  readonly created_at: string;
  readonly updated_at: string;
  readonly result_url: string | null;
}

export interface CancelResult {
  readonly job_id: string;
  readonly outcome: CancelOutcome;
  readonly state: ExportState;
}

interface JobRow {
  id: string;
  customer_id: string;
  format: ExportFormat;
  state: ExportState;
  progress: number;
  interruptible: boolean;
  created_at: Date;
  updated_at: Date;
  result_url: string | null;
}

const COLUMNS = 'id, customer_id, format, state, progress, interruptible, created_at, updated_at, result_url';

function view(row: JobRow): ExportJobView {
  return {
    job_id: row.id,
    customer_id: row.customer_id,
    format: row.format,
    state: row.state,
    progress: row.progress,
    interruptible: row.interruptible,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    result_url: row.result_url,
  };
}

/** Export jobs, whose state lives only in PostgreSQL so any instance can serve or advance them. */
export class ExportJobs {
  constructor(private readonly t: Tables) {}

  async create(db: PoolClient, tenant: string, customerId: string, format: ExportFormat, idempotencyKey: string): Promise<ExportJobView> {
    const inserted = await db.query<JobRow>(
      `INSERT INTO ${this.t.exportJobs} (id, tenant, customer_id, format, state, progress, interruptible, created_at, updated_at, idempotency_key)
       VALUES ($1, $2, $3, $4, 'queued', 0, true, clock_timestamp(), clock_timestamp(), $5) RETURNING ${COLUMNS}`,
      [`exp_${randomUUID().replaceAll('-', '')}`, tenant, customerId, format, idempotencyKey],
    );
    const row = inserted.rows[0];
    if (row === undefined) throw new Error('export job insert returned no row');
    return view(row);
  }

  async find(db: Queryable, tenant: string, id: string): Promise<ExportJobView | undefined> {
    const found = await db.query<JobRow>(`SELECT ${COLUMNS} FROM ${this.t.exportJobs} WHERE id = $1 AND tenant = $2`, [id, tenant]);
    const row = found.rows[0];
    return row === undefined ? undefined : view(row);
  }

  /**
   * Truthful cancellation under a row lock: a queued or still-interruptible running job is
   * cancelled (`stopped`); a finalizing job is left to finish (`not_interruptible`); a finished
   * one is untouched (`already_completed`). Undefined when the job is not this tenant's.
   */
  async cancel(db: PoolClient, tenant: string, id: string): Promise<CancelResult | undefined> {
    const found = await db.query<JobRow>(`SELECT ${COLUMNS} FROM ${this.t.exportJobs} WHERE id = $1 AND tenant = $2 FOR UPDATE`, [
      id,
      tenant,
    ]);
    const row = found.rows[0];
    if (row === undefined) return undefined;
    if (row.state === 'queued' || (row.state === 'running' && row.interruptible)) {
      await db.query(
        `UPDATE ${this.t.exportJobs} SET state = 'cancelled', interruptible = false, finished_at = now(), updated_at = now() WHERE id = $1`,
        [id],
      );
      return { job_id: id, outcome: 'stopped', state: 'cancelled' };
    }
    if (row.state === 'running') return { job_id: id, outcome: 'not_interruptible', state: row.state };
    return { job_id: id, outcome: 'already_completed', state: row.state };
  }

  /**
   * Moves jobs along by the clock: `queued` for `stepMs` after creation, then `running` for
   * `stepMs`, the last FINALIZING_FRACTION of it not interruptible, then `succeeded`.
   * Re-checks `state` under each row lock, so a job cancelled meanwhile is never advanced.
   */
  async advance(db: Queryable, stepMs: number): Promise<void> {
    await db.query(
      `UPDATE ${this.t.exportJobs} SET state = 'running', started_at = now(), updated_at = now()
       WHERE state = 'queued' AND created_at <= now() - make_interval(secs => $1::float8 / 1000)`,
      [stepMs],
    );
    await db.query(
      `UPDATE ${this.t.exportJobs} j SET
         state         = CASE WHEN x.el >= $1::float8 THEN 'succeeded' ELSE 'running' END,
         progress      = CASE WHEN x.el >= $1::float8 THEN 100 ELSE LEAST(99, floor(x.el * 100 / $1::float8))::int END,
         interruptible = j.interruptible AND x.el < $1::float8 * (1 - $2::float8),
         finished_at   = CASE WHEN x.el >= $1::float8 THEN now() END,
         result_url    = CASE WHEN x.el >= $1::float8
                           THEN 'https://exports.gatehouse.invalid/' || j.tenant || '/' || j.id || '.' || j.format END,
         updated_at    = now()
       FROM (SELECT id, extract(epoch FROM now() - started_at) * 1000 AS el FROM ${this.t.exportJobs} WHERE state = 'running') x
       WHERE j.id = x.id AND j.state = 'running'`,
      [stepMs, FINALIZING_FRACTION],
    );
  }
}
