// Everything a tool author writes against. A tool pack imports this package only.

// Contracts and handlers.
export { Catalog, defineTool, Effect, implement, RateLimitScope, RetryClass } from '@gatehouse/contracts';
export type {
  AssertionCredential,
  CallCredential,
  CancelMode,
  CredentialRequest,
  DraftArgs,
  ExchangedCredential,
  ExecutionContext,
  ImplementationParts,
  JSONSchema,
  LookupResult,
  PreviewResultOf,
  ProposalArgs,
  ProposalDraft,
  RateLimit,
  RunArgs,
  RunResult,
  SchemaType,
  StatusAnswer,
  ToolAddress,
  ToolArgs,
  ToolContract,
  ToolHandler,
  ToolImplementation,
  ToolResultOf,
  ToolSpec,
  ValidationResult,
} from '@gatehouse/contracts';

// Errors: the one shape a handler fails with.
export { ErrorCode, isToolFailure, ToolFailure, toolError } from '@gatehouse/contracts';
export type { ToolError, ToolErrorExtras } from '@gatehouse/contracts';

// Preview/commit pairs typed by their proposal schema.
export { commitInputSchema, definePreviewCommit, proposalIdSchema } from './preview-commit.js';
export type {
  CommitContract,
  CommitInputSchema,
  CommitSpec,
  PreviewCommit,
  PreviewCommitSpec,
  PreviewContract,
  PreviewSpec,
} from './preview-commit.js';

// Calls to a system of record: the handler's side, and the system of record's own check of them.
export { authorizedFetch } from './call-credential.js';
export {
  ASSERTION_REFUSALS,
  CALL_ASSERTION_TYPE,
  CallAssertionVerifier,
  canonicalSha256,
  MemoryReplayGuard,
  refusalResponse,
} from '@gatehouse/identity';
export type {
  AssertionCheck,
  AssertionRefusalCode,
  CallAssertionClaims,
  CallAssertionVerifierOptions,
  CallKind,
  CallRequest,
  RefusalResponse,
  ReplayGuard,
} from '@gatehouse/identity';

// Tool packs.
export { defineToolPack, isToolPack, TOOL_PACK_KIND, toolsOf } from './tool-pack.js';
export type { ToolPack, ToolPackSpec } from './tool-pack.js';
export { CONFIG_NAME_PATTERN, readPackConfig, RESERVED_PREFIXES } from './pack-config.js';
export type { ConfigSpec, ConfigValue, ConfigVariable, Env, PackConfig } from './pack-config.js';
export { describePack, PACK_NAME_PATTERN, validatePack } from './validate-pack.js';
export type { PackContents, PackDescription, PackVariable, ValidatedPack } from './validate-pack.js';
export { PackError } from './pack-error.js';
export type { PackErrorCode } from './pack-error.js';
