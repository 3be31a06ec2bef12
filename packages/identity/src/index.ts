export { AccessTokenVerifier, discoverIssuer, IssuerDiscoveryError } from './token-verifier.js';
export type { AccessTokenVerifierOptions, IssuerMetadata, TokenCheck, TokenRefusal, VerifiedClaims } from './token-verifier.js';
export { checkGrants, claimValues, ClaimMappingError, grantedBy, GRANTS_SCHEMA } from './claim-grants.js';
export type { ClaimGrant, Granted } from './claim-grants.js';
export { discoverRelyingParty, oidc } from './relying-party.js';
export type { RelyingParty } from './relying-party.js';
export { bearerChallenge, IDENTITY_REFUSALS, refusalOfToken, sameSecret } from './refusals.js';
export type { IdentityRefusalCode } from './refusals.js';
