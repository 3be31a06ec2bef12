export { AccessTokenVerifier, discoverIssuer, IssuerDiscoveryError } from './token-verifier.js';
export type { AccessTokenVerifierOptions, IssuerMetadata, TokenCheck, TokenRefusal, VerifiedClaims } from './token-verifier.js';
export { APPROVER_POLICY_SCHEMA, checkGrants, claimValues, ClaimMappingError, grantedBy, GRANTS_SCHEMA } from './claim-grants.js';
export type { ClaimGrant, Granted } from './claim-grants.js';
export { ClaimPolicy } from './claim-policy.js';
export type { ClaimPolicyDocument, MappedPerson, PersonClaims } from './claim-policy.js';
export { discoverRelyingParty, oidc } from './relying-party.js';
export type { RelyingParty } from './relying-party.js';
export { bearerChallenge, IDENTITY_REFUSALS, refusalOfToken, sameSecret } from './refusals.js';
export type { IdentityRefusalCode } from './refusals.js';
export {
  assertionJwks,
  CALL_ASSERTION_ALGORITHM,
  CALL_ASSERTION_TYPE,
  CallAssertionSigner,
  HTTP_METHOD,
  requestMethod,
  requestTarget,
} from './call-assertion.js';
export type { AssertionKey, CallAssertionClaims, CallFacts, CallKind, PersonClaim } from './call-assertion.js';
export {
  ASSERTION_CLOCK_TOLERANCE_S,
  ASSERTION_REFUSALS,
  CallAssertionVerifier,
  canonicalSha256,
  MemoryReplayGuard,
  refusalResponse,
} from './assertion-verifier.js';
export type {
  AssertionCheck,
  AssertionRefusalCode,
  CallAssertionVerifierOptions,
  CallRequest,
  RefusalResponse,
  ReplayGuard,
} from './assertion-verifier.js';
export { TokenExchanger } from './token-exchange.js';
export type { DelegationSource, ExchangeOutcome, ExchangeStep, ExchangeTarget, TokenExchangerOptions } from './token-exchange.js';
export {
  generateSealingKey,
  parseSealingKeys,
  parseUnsealingKeys,
  SEALED_TOKEN_TYPE,
  SealingKeyError,
  TokenSealer,
  TokenUnsealer,
} from './token-seal.js';
export type { SealContext, SealingKeys, UnsealingKeys, UnsealOutcome, UnsealRefusal } from './token-seal.js';
