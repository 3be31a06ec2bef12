export { executorConfigFromEnv } from './config.js';
export type { ExecutorConfig } from './config.js';
export { executorMain } from './executor-main.js';
export type { ExecutorMainOptions, HostedTools } from './executor-main.js';
export { commandClaimKey } from './command-claim.js';
export { runHandler } from './run-handler.js';
export { executorJwks, JWKS_PATH, startExecutor } from './service.js';
export type { AssertionSettings, ExecutorServiceOptions, RunningExecutor } from './service.js';
export type { SlotLimits } from './keyed-write.js';
