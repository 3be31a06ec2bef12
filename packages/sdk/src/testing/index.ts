// What a tool author's own tests use: `@gatehouse/sdk/testing`. Nothing here talks to Kafka or Redis;
// a pack's handlers meet their system of record (or a stand-in for it) exactly as in production.
export { testContext, TEST_CREDENTIAL } from './test-context.js';
export { hostPackForTest } from './host-pack-for-test.js';
export type { PackUnderTest } from './host-pack-for-test.js';
export { CONTRACT_PARTS, contractCases, contractVerdict } from './contract-cases.js';
export type { ContractCase, ContractCases, ContractPart } from './contract-cases.js';
