import type { GatehouseMetrics, Logger } from '@gatehouse/telemetry';
import type { DecisionPublisher } from './decision-publisher.js';
import { ids } from './decision-publisher.js';
import { WITHDRAWN_REASON } from './decision-events.js';
import type { RequestRepository, StoredRequest } from './request-repository.js';

/** Whether a run may still make calls; the sweeper withdraws the pending requests of one that may not. */
export type RunIsActive = (runId: string) => Promise<boolean>;

export interface SweeperOptions {
  readonly repository: RequestRepository;
  readonly decisions: DecisionPublisher;
  readonly logger: Logger;
  readonly intervalMs: number;
  /** How long a claimed, unpublished decision waits before another publisher takes it over. */
  readonly staleClaimMs: number;
  readonly batch?: number;
  readonly metrics?: GatehouseMetrics;
  /** Stopping a run withdraws its pending requests: checked every tick. */
  readonly runIsActive?: RunIsActive;
}

export interface RunningSweeper {
  /** Runs one sweep now (also what the timer does); resolves when it is done. */
  sweep(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Every tick: expires pending requests whose time ran out (silence is never consent), withdraws
 * those of runs that were stopped, and publishes their decision; then retries the outbox, decisions committed but never confirmed published.
 * Ticks never overlap; a failure is logged and the next tick tries again.
 */
export function startSweeper(options: SweeperOptions): RunningSweeper {
  const { repository, decisions, logger } = options;
  const batch = options.batch ?? 100;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;

  // `again`: rows claimed before, whose refusal may be out already.
  const publishAll = async (rows: readonly StoredRequest[], what: string, again = false): Promise<void> => {
    for (const row of rows) {
      try {
        await decisions.publish(row, again);
      } catch (error) {
        logger.error({ err: error, ...ids(row), decision: row.state }, `${what}: publish failed; retried later`);
      }
    }
  };

  const once = async (): Promise<void> => {
    try {
      const expired = await repository.expireDue(batch);
      for (const row of expired) {
        options.metrics?.approvalDecision(row.request.tool, row.state);
        logger.info({ ...ids(row), command_id: row.command_id }, 'approval request expired unanswered');
      }
      await publishAll(expired, 'expiry');
      if (options.runIsActive !== undefined) {
        for (const runId of await repository.runsWithPending(batch)) {
          if (await options.runIsActive(runId)) continue;
          const withdrawn = await repository.withdrawRun(runId, WITHDRAWN_REASON);
          for (const row of withdrawn)
            logger.info({ ...ids(row), command_id: row.command_id }, 'approval request withdrawn: its run is no longer active');
          await publishAll(withdrawn, 'withdrawal');
        }
      }
      await publishAll(await repository.claimUnpublished(options.staleClaimMs, batch), 'outbox', true);
    } catch (error) {
      logger.error({ err: error }, 'sweep failed');
    }
  };

  const sweep = (): Promise<void> => {
    running = running.then(once);
    return running;
  };

  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      void sweep().then(schedule);
    }, options.intervalMs);
  };
  schedule();

  return {
    sweep,
    stop: async () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await running;
    },
  };
}
