import { EventSigner, generateSigningKey, keyRing, parseSigningKey, parseTrustedKeys } from '@gatehouse/events';
import type { EventByRole, KeyRing, KeyRole, SigningKey, TopicRole } from '@gatehouse/events';

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
/** The keys an executor runs orders from: the policy and approval services'. */
export const TEST_ORDER_KEYS: KeyRing = keyRing({ policy: TEST_PUBLIC_KEYS.policy, approval: TEST_PUBLIC_KEYS.approval });

/** The public keys as the environment of a service process, a client or the CLI gives them. */
export const PUBLIC_KEYS_ENV = {
  GATEHOUSE_POLICY_KEYS: PAIRS.policy.trustedKey,
  GATEHOUSE_APPROVAL_KEYS: PAIRS.approval.trustedKey,
  GATEHOUSE_EXECUTOR_KEYS: PAIRS.executor.trustedKey,
} as const;

/** The signing variables of a service process started from `script` (`services/<role>/dist/main.js`), with every public key. */
export function signingEnvFor(script: string): Record<string, string> {
  const role = /services\/(policy|approval|executor)\//.exec(script)?.[1] as KeyRole | undefined;
  return { ...PUBLIC_KEYS_ENV, ...(role === undefined ? {} : { GATEHOUSE_SIGNING_KEY: PAIRS[role].signingKey }) };
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
