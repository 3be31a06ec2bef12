export { executorConfigFromEnv } from './config.js';
export type { ExecutorConfig } from './config.js';
export { runHandler } from './run-handler.js';
export { startExecutor } from './service.js';
export type { ExecutorServiceOptions, RunningExecutor } from './service.js';
export type { SlotLimits } from './write-path.js';
