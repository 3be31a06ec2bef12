export { mcpConfigFromEnv } from './config.js';
export type { McpConfig } from './config.js';
export { createRunServer, runTools } from './run-server.js';
export type { FrontDoor } from './run-server.js';
export { startMcpService } from './service.js';
export type { McpServiceOptions, RunningMcpService } from './service.js';
export { RunTaskStore } from './task-store.js';
