export {
  API_ERROR_CODE_LIST,
  ApiErrorCode,
  ASSERTION_REFUSALS,
  entriesOn,
  ErrorCode,
  ERROR_CODE_LIST,
  errorCodeTableMarkdown,
  ERRORS,
  IDENTITY_REFUSALS,
  isErrorCode,
  isGatehouseErrorCode,
  surfaceTableMarkdown,
} from './error-codes.js';
export type {
  AssertionRefusalCode,
  CodeOn,
  EntriesOn,
  ErrorEntry,
  ErrorSurface,
  GatehouseErrorCode,
  HttpStatus,
  IdentityRefusalCode,
} from './error-codes.js';
export { GatehouseError, isGatehouseError } from './gatehouse-error.js';
export type { GatehouseErrorOptions } from './gatehouse-error.js';
export { ContractError, toolError } from './tool-error.js';
export type { ToolError, ToolErrorExtras } from './tool-error.js';
export { CanonicalJsonError, canonicalArguments, canonicalJson, sha256Hex } from './canonical.js';
export type { CanonicalArguments } from './canonical.js';
export { DEFAULT_CONCURRENCY, Effect, RateLimitScope, RetryClass, defineTool } from './define-tool.js';
export type {
  CancelMode,
  JSONSchema,
  RateLimit,
  SchemaType,
  ToolArgs,
  ToolContract,
  ToolHandler,
  ToolResultOf,
  ToolSpec,
} from './define-tool.js';
export { buildContract } from './define-tool.js';
export type {
  BuiltContract,
  DraftArgs,
  IsPreview,
  PairRole,
  PreviewField,
  PreviewResultOf,
  ProposalArgs,
  RunArgs,
  RunResult,
} from './define-tool.js';
export { TOOL_NAME_PATTERN, parseToolAddress, toolAddress } from './tool-address.js';
export type { ParsedAddress, ToolAddress } from './tool-address.js';
export { lintCatalog, lintSchema, lintTool } from './schema-lint.js';
export { Catalog } from './catalog.js';
export { contractSha256, contractStatement, statementDifferences } from './contract-hash.js';
export type { LookupResult, ValidationResult } from './catalog.js';
export type { ValidationDetail } from './validation-errors.js';
export { snapshotByRole, snapshotJson, toMcpTool, toOpenAiFunction, toolNameFromMcp } from './exports.js';
export type { McpTool, OpenAiFunctionTool, RoleSnapshot, RoleSnapshotEntry } from './exports.js';
export { implement, ToolFailure } from './implementation.js';
export { isExchangedCredential } from './implementation.js';
export type {
  AssertionCredential,
  CallCredential,
  CredentialRequest,
  ExchangedCredential,
  ExecutionContext,
  ProposalDraft,
  StatusAnswer,
  ToolImplementation,
} from './implementation.js';
export { isToolFailure } from './implementation.js';
export type { ImplementationParts } from './implementation.js';
export type { Proposal, ProposalPerson } from './proposal.js';
