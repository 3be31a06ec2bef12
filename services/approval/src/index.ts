export { APPROVAL_ENV_DEFAULTS, approvalConfigFromEnv, checkSchemaName } from './config.js';
export type { ApprovalConfig } from './config.js';
export { Approvers, tokenSha256 } from './approvers.js';
export type { Approver } from './approvers.js';
export { ApprovalDecisions, REASON_MAX } from './approval-decisions.js';
export type { DecisionRefusal, DecisionOutcome } from './approval-decisions.js';
export { buildApi } from './api.js';
export type { ApiOptions } from './api.js';
export { DEFAULT_CONSOLE_DIR, loadConsoleAssets } from './console-assets.js';
export type { ConsoleAssets } from './console-assets.js';
export { ensureDatabase, tablesIn } from './db.js';
export type { Tables } from './db.js';
export { approvalRecord, approvedOrder, commitKey, decisionEvent, refusalResult } from './decision-events.js';
export { DecisionPublisher } from './decision-publisher.js';
export { migrate, SCHEMA_VERSION } from './migrations.js';
export { APPROVAL_STATES, ApprovalState, RequestRepository } from './request-repository.js';
export type { StoredRequest } from './request-repository.js';
export type { RequestDetail, RequestSummary } from './request-view.js';
export { startApprovalService } from './service.js';
export type { ApprovalServiceOptions, RunningApprovalService } from './service.js';
export { ApproverAuth, CSRF_HEADER, SECURE_SESSION_COOKIE, SESSION_COOKIE } from './approver-auth.js';
export type { ApproverIdentity } from './approver-auth.js';
export { ApproverPolicy } from './approver-policy.js';
export { SessionStore } from './sessions.js';
export { sessionCookie } from './sign-in.js';
export { TOKEN_FILE_ISSUER } from './approvers.js';
export type { Decider } from './request-repository.js';
export {
  eventOf,
  loadWebhookEndpoints,
  notificationOf,
  parseWebhookEndpoints,
  retryDelayMs,
  WEBHOOK_EVENTS,
  WebhookOutbox,
} from './webhooks.js';
export type { WebhookEndpoint, WebhookEvent, WebhookSettings } from './webhooks.js';
