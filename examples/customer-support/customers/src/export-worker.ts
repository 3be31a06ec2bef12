import type { Pool } from 'pg';
import type { Logger } from '@gatehouse/telemetry';
import type { ExportJobs } from './export-jobs.js';

/** Advances export jobs on a timer; ticks often enough that a phase is observed in ~20 steps. */
export class ExportWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private readonly tickMs: number;

  constructor(
    private readonly pool: Pool,
    private readonly jobs: ExportJobs,
    private readonly stepMs: number,
    private readonly logger: Logger,
  ) {
    this.tickMs = Math.max(5, Math.min(250, Math.floor(stepMs / 20)));
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.jobs
        .advance(this.pool, this.stepMs)
        .catch((error: unknown) => this.logger.error({ err: error }, 'export worker tick failed'))
        .finally(() => this.schedule());
    }, this.tickMs);
  }
}
