export { ApprovalStore } from './approval-store.js';
export type { ApprovalRecord } from './approval-store.js';
export { claimWhenFree, ClaimLedger, LedgerState, onLedgerStep, recordLedgerSteps, RUN_ID_PATTERN } from './claim-ledger.js';
export type {
  Claim,
  ClaimTerms,
  CommandEntry,
  LedgerListener,
  LedgerOptions,
  LedgerRecord,
  LedgerStep,
  Resolution,
  Staging,
  Verdict,
} from './claim-ledger.js';
export { DelegationStore, DelegationWriter } from './delegation-store.js';
export type { GrantTarget, SealContext, TokenOpen, TokenSeal } from './delegation-store.js';
export { Keyspace } from './keyspace.js';
export { keepRenewing } from './lease.js';
export type { StopRenewing } from './lease.js';
export { LuaScript, ReplicationUnconfirmed, requireReplicas } from './lua-script.js';
export type { ReplicaBarrier } from './lua-script.js';
export { ProposalStore } from './proposal-store.js';
export type { Proposal, ProposalState, StoredProposal } from './proposal-store.js';
export { RateLimiter } from './rate-limiter.js';
export type { RateDecision, RateLimit } from './rate-limiter.js';
export { createRedis, readRedisUrl, REDIS_URL_DEFAULT, redisUrlFromEnv } from './redis-client.js';
export type { Redis, RedisErrorLog, RedisNodeAddress, RedisTarget, RedisUrlReading } from './redis-client.js';
export { ReferenceClock } from './reference-clock.js';
export { ResourceLock } from './resource-lock.js';
export { isActive, parseRun, RunRegistry } from './run-registry.js';
export type { PersonRef, Registrar, Run } from './run-registry.js';
export { RUN_TOKEN_PREFIX, RunTokens, tokenSha256 } from './run-tokens.js';
export type { TokenCheck } from './run-tokens.js';
export { SlotPool } from './slot-pool.js';
export type { SlotScope } from './slot-pool.js';
