export { policyConfigFromEnv } from './config.js';
export type { PolicyConfig } from './config.js';
export { decide } from './decide.js';
export type { DecideDeps, Decision } from './decide.js';
export { buildControlApi } from './control-api.js';
export { CONTROL_TOKEN_CLIENT, TrustedCallers } from './trusted-callers.js';
export type { TrustedCaller, TrustedCallerIdentity } from './trusted-callers.js';
export { loadOperatorPolicy, Operators } from './operators.js';
export type { Operator, OperatorCheck, OperatorIdentity } from './operators.js';
export { startPolicyService } from './service.js';
export type { PolicyServiceOptions, RunningPolicyService } from './service.js';
export { decideWrite } from './write-decision.js';
export type { WriteDecision, WriteDeps } from './write-decision.js';
// Roles, the policy table and the idempotency key are @gatehouse/governance's; re-exported so that
// the integration support and the bench keep importing them from here.
export { idempotencyKeyOf, loadRoles, parseRoles, PolicyTable } from '@gatehouse/governance';
export type { PolicyDecision, PolicyMatch, PolicyRule, PolicySubject, Role, Roles } from '@gatehouse/governance';
