import { collectDefaultMetrics, Registry } from 'prom-client';

let registry: Registry | undefined;

/**
 * The registry of Node's process metrics (CPU, memory, event loop lag, GC), made and filled once per
 * process: several services in one process (the test harness) each scrape it beside their own.
 */
export function processRegistry(): Registry {
  if (registry === undefined) {
    registry = new Registry();
    collectDefaultMetrics({ register: registry });
  }
  return registry;
}
