import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventSigner, generateSigningKey, keyRing, parseSigningKey, parseTrustedKeys, RunKey } from '@gatehouse/events';
import type { EventByRole, KeyRing, KeyRole, SigningKey, ToolCommand, TopicRole, TrustedKeys } from '@gatehouse/events';
import type { AssertionSettings } from '@gatehouse/executor';
import { randomUUID } from 'node:crypto';
import {
  assertionJwks,
  CallAssertionSigner,
  canonicalSha256,
  generateSealingKey,
  parseSealingKeys,
  parseUnsealingKeys,
  TokenSealer,
  TokenUnsealer,
} from '@gatehouse/identity';
import type { CallFacts, SealingKeys, UnsealingKeys } from '@gatehouse/identity';

// One key pair per service role for every Gatehouse a test process starts, in-process or as child
// processes: each service signs with its role's key, and every reader trusts the roles it should (as
// a deployment's would).
const PAIRS = {
  policy: generateSigningKey('test-policy'),
  approval: generateSigningKey('test-approval'),
  executor: generateSigningKey('test-executor'),
} as const satisfies Record<KeyRole, unknown>;

/** Each role's private key, for services started in the test process. */
export const TEST_SIGNING_KEYS: Readonly<Record<KeyRole, SigningKey>> = {
  policy: parseSigningKey(PAIRS.policy.signingKey),
  approval: parseSigningKey(PAIRS.approval.signingKey),
  executor: parseSigningKey(PAIRS.executor.signingKey),
};

/** Each role's public keys, as one variable lists them. */
const TEST_PUBLIC_KEYS = {
  policy: parseTrustedKeys(PAIRS.policy.trustedKey),
  approval: parseTrustedKeys(PAIRS.approval.trustedKey),
  executor: parseTrustedKeys(PAIRS.executor.trustedKey),
} as const;

/** Every role's public key: what a client, a subscriber or a trace checks with. */
export const TEST_KEY_RING: KeyRing = keyRing(TEST_PUBLIC_KEYS);

/** The public keys as the environment of a service process, a client or the CLI gives them. */
export const PUBLIC_KEYS_ENV = {
  GATEHOUSE_POLICY_KEYS: PAIRS.policy.trustedKey,
  GATEHOUSE_APPROVAL_KEYS: PAIRS.approval.trustedKey,
  GATEHOUSE_EXECUTOR_KEYS: PAIRS.executor.trustedKey,
} as const;

/** The MCP front doors' key pair: what they prove their clients' commands with (MCP_SIGNING_KEY, GATEHOUSE_MCP_KEYS). */
const FRONT_DOOR_PAIR = generateSigningKey('test-mcp');
/** The front doors' private key, for front doors started in the test process. */
export const TEST_FRONT_DOOR_KEY: SigningKey = parseSigningKey(FRONT_DOOR_PAIR.signingKey);
/** The front doors' public keys, as the policy service trusts them. */
export const TEST_FRONT_DOOR_KEYS: TrustedKeys = parseTrustedKeys(FRONT_DOOR_PAIR.trustedKey);

/** The executors' call-assertion pair: a key of its own, as in a deployment. */
const ASSERTION_PAIR = generateSigningKey('test-assertion');

/** The issuer the test executors name in their call assertions, and the test systems of record check. */
export const TEST_ASSERTION_ISSUER = 'urn:gatehouse:test';

/** What an executor started in the test process mints call assertions with. */
export const TEST_ASSERTION_SETTINGS: AssertionSettings = {
  issuer: TEST_ASSERTION_ISSUER,
  key: parseSigningKey(ASSERTION_PAIR.signingKey),
};

/** The executors' JWKS, as a system of record started by a test reads it. */
export const TEST_ASSERTION_JWKS = assertionJwks(parseTrustedKeys(ASSERTION_PAIR.trustedKey));

/**
 * The executors' sealing pair (X25519): the control API and the MCP front door keep people's tokens in
 * Redis only sealed to its public half, and executors open them with the private half.
 */
const SEALING_PAIR = generateSealingKey('test-sealing');

/** The executors' public sealing keys (GATEHOUSE_SEALING_KEYS), as every writer of people's tokens holds them. */
export const TEST_SEALING_KEYS: SealingKeys = parseSealingKeys(SEALING_PAIR.sealingKey);
/** The executors' private sealing keys (GATEHOUSE_UNSEALING_KEYS). */
export const TEST_UNSEALING_KEYS: UnsealingKeys = parseUnsealingKeys(SEALING_PAIR.unsealingKey);
/** What the control API and the MCP front door seal people's tokens with: the public keys only. */
export const TEST_SEALER = new TokenSealer(TEST_SEALING_KEYS);
/** What an executor seals and opens people's tokens with. */
export const TEST_UNSEALER = new TokenUnsealer(TEST_SEALING_KEYS, TEST_UNSEALING_KEYS);

let signer: Promise<CallAssertionSigner> | undefined;

/**
 * A call assertion signed with the test executors' key, as an executor would mint it for a call to
 * `audience` and the one request `facts` name (`method`, and `target`: the path and query): a read
 * of tenant `acme` unless `facts` say otherwise. A write given `body` names the body's canonical
 * hash and an approval, as a real write's does.
 */
export async function testAssertion(
  audience: string,
  facts: Partial<CallFacts> & Pick<CallFacts, 'method' | 'target'> & { readonly body?: unknown },
): Promise<string> {
  signer ??= CallAssertionSigner.create(TEST_ASSERTION_ISSUER, TEST_ASSERTION_SETTINGS.key);
  const { body, ...rest } = facts;
  const write = rest.call === 'write';
  return (await signer).mint({
    audience,
    call: 'read',
    principal: 'agent:test',
    actor: 'test-executor',
    tenant: 'acme',
    runId: 'run-test',
    commandId: `cmd-${randomUUID()}`,
    tool: 'test.tool.v1',
    onBehalfOf: null,
    argumentsSha256: write && body !== undefined ? (canonicalSha256(body) ?? null) : null,
    idempotencyKey: null,
    proposalId: write ? 'prop-test' : null,
    approvalId: write ? 'appr-test' : null,
    approver: write ? 'test-approver' : null,
    expiresAt: Date.now() + 30_000,
    ...rest,
  });
}

let jwksFile: string | undefined;

/** The executors' JWKS as a file (written once per test process): what a system of record started from its environment reads. */
export function testJwksFile(): string {
  if (jwksFile === undefined) {
    jwksFile = join(mkdtempSync(join(tmpdir(), 'gatehouse-jwks-')), 'jwks.json');
    writeFileSync(jwksFile, JSON.stringify(TEST_ASSERTION_JWKS));
  }
  return jwksFile;
}

/**
 * The signing variables of a service process started from `script` (`services/<role>/dist/main.js`), with every public key,
 * and the sealing keys of people's tokens for the services that keep them (used once token exchange is configured).
 */
export function signingEnvFor(script: string): Record<string, string> {
  const role = /services\/(policy|approval|executor)\//.exec(script)?.[1] as KeyRole | undefined;
  const assertions =
    role === 'executor' ? { GATEHOUSE_ASSERTION_KEY: ASSERTION_PAIR.signingKey, GATEHOUSE_ASSERTION_ISSUER: TEST_ASSERTION_ISSUER } : {};
  const sealing = /services\/(policy|executor|mcp)\//.test(script)
    ? {
        GATEHOUSE_SEALING_KEYS: SEALING_PAIR.sealingKey,
        ...(role === 'executor' ? { GATEHOUSE_UNSEALING_KEYS: SEALING_PAIR.unsealingKey } : {}),
      }
    : {};
  const frontDoor =
    role === 'policy'
      ? { GATEHOUSE_MCP_KEYS: FRONT_DOOR_PAIR.trustedKey }
      : /services\/mcp\//.test(script)
        ? { MCP_SIGNING_KEY: FRONT_DOOR_PAIR.signingKey }
        : {};
  return {
    ...PUBLIC_KEYS_ENV,
    ...(role === undefined ? {} : { GATEHOUSE_SIGNING_KEY: PAIRS[role].signingKey }),
    ...assertions,
    ...sealing,
    ...frontDoor,
  };
}

const signers: Readonly<Record<KeyRole, EventSigner>> = {
  policy: new EventSigner(TEST_SIGNING_KEYS.policy),
  approval: new EventSigner(TEST_SIGNING_KEYS.approval),
  executor: new EventSigner(TEST_SIGNING_KEYS.executor),
};

/**
 * The signature headers the service of `role` would put on an event it publishes with `headers`
 * (default: the approval service signing an order): for tests that publish events themselves.
 */
export function signedHeaders<R extends TopicRole>(
  event: EventByRole[R],
  options: { readonly topic?: R; readonly by?: KeyRole; readonly headers?: Record<string, string> } = {},
): Record<string, string> {
  const topic = options.topic ?? ('execute' as R);
  return { ...options.headers, ...signers[options.by ?? 'approval'].headersFor(topic, event, options.headers) };
}

/** The proof headers of a command sent for `run` with its key, answers routed to `replyPartition` (none: null), as the client sends them. */
export function proofFor(
  run: { readonly run_key: string },
  command: ToolCommand,
  replyPartition: number | null = null,
): Record<string, string> {
  return RunKey.parse(run.run_key).prove(command, replyPartition);
}
