export { checkCall } from './boundary.js';
export type {
  BoundaryCommand,
  BoundaryDeps,
  BoundaryRun,
  IdempotencyLookup,
  ProposalLookup,
  RateLimiterPort,
  RateTake,
  RunLookup,
} from './boundary-ports.js';
export { BOUNDARY_CHECKS, BOUNDARY_STAGES, stageOfRefusal, stagePosition } from './boundary-stages.js';
export type { BoundaryCheck, BoundaryStage } from './boundary-stages.js';
export { APPROVERS_SCHEMA } from './approvers-schema.js';
export { POLICY_TABLE_SCHEMA, PolicyTable } from './policy-table.js';
export type { PolicyDecision, PolicyEvaluator, PolicyMatch, PolicyOutcome, PolicyRule, PolicySubject } from './policy-table.js';
export { buildProposal, idempotencyKeyOf, implicitProposal } from './proposal.js';
export type { Proposal, ProposalOrigin } from './proposal.js';
export { loadRoles, parseRoles, ROLES_SCHEMA, rolesGranting } from './roles.js';
export { grantRun, liveToolsOf } from './run-grant.js';
export type { RunGrant, RunRequest } from './run-grant.js';
export type { Role, Roles } from './roles.js';
export type {
  AllowedWriteVerdict,
  ApprovalWriteVerdict,
  CallVerdict,
  FinishedWriteVerdict,
  ReadVerdict,
  Refusal,
  WriteVerdict,
} from './verdict.js';
export { isSelfApproval } from './self-approval.js';
export type { IdpIdentity } from './self-approval.js';
