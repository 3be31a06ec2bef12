export { toCallError, toCallResult } from './call-result.js';
export type { CallError, CallResult, PendingNotice, UnknownCodeDetails } from './call-result.js';
export { createClient, GatehouseClient } from './client.js';
export { RunKey, RunKeyError } from '@gatehouse/events';
export type { CallOptions, ClientOptions, ReplyPoint, ResumeOptions, SentCommand, ToolDefinitionFormat } from './client.js';
export {
  DATA_NOTE,
  MCP_META,
  pendingApprovalMeta,
  toMcpPendingResult,
  toMcpToolResult,
  toModelError,
  toOpenAiToolMessage,
} from './model-adapters.js';
export type { McpTextContent, McpToolResult, ModelError, PendingApprovalMeta } from './model-adapters.js';
export { resultKeysFromEnv } from './result-keys.js';
export { subscribeResults } from './result-subscriber.js';
export type { ResultSubscription } from './result-subscriber.js';
export { WebhookReceiver } from './webhook-receiver.js';
export type { WebhookReceipt, WebhookRefusal } from './webhook-receiver.js';
