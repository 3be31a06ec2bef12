import { toolError } from '@gatehouse/contracts';
import type { ToolError } from '@gatehouse/contracts';
import { isActive } from '@gatehouse/state';
import type { RunLookup } from './executor-ports.js';

/**
 * Stopping a run is the kill switch: RUN_NOT_FOUND when the order's run was stopped or has expired
 * before the order started; undefined otherwise. A run whose record is not there at all is left to
 * the checks that own it (the boundary refused its calls; a write still has to prove its approval).
 */
export async function runStoppedError(runs: RunLookup, runId: string, now: number): Promise<ToolError | undefined> {
  const run = await runs.get(runId);
  if (run === undefined || isActive(run, now)) return undefined;
  return toolError('RUN_NOT_FOUND', `Run ${runId} was stopped or has expired before this order started; nothing ran`);
}
