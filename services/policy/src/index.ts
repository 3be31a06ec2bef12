export { DEFAULT_ROLES_FILE, policyConfigFromEnv } from './config.js';
export type { PolicyConfig } from './config.js';
export { decide } from './decide.js';
export type { DecideDeps, Decision } from './decide.js';
export { buildControlApi } from './control-api.js';
export { loadRoles, parseRoles } from './roles.js';
export type { Role, Roles } from './roles.js';
export { startPolicyService } from './service.js';
export type { PolicyServiceOptions, RunningPolicyService } from './service.js';
