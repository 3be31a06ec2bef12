import { generateSigningKey, OrderSigner, parseSigningKey, parseTrustedKeys } from '@gatehouse/events';
import type { ExecutionOrder, SigningKey, TrustedKeys } from '@gatehouse/events';

// One key pair for every Gatehouse a test process starts, in-process or as child processes: the
// policy and approval services sign with it, the executors trust it (as a deployment's would).
const PAIR = generateSigningKey('test-issuer');

/** GATEHOUSE_SIGNING_KEY and GATEHOUSE_TRUSTED_KEYS for services run as processes. */
export const SIGNING_ENV = { GATEHOUSE_SIGNING_KEY: PAIR.signingKey, GATEHOUSE_TRUSTED_KEYS: PAIR.trustedKey } as const;

export const TEST_SIGNING_KEY: SigningKey = parseSigningKey(PAIR.signingKey);
export const TEST_TRUSTED_KEYS: TrustedKeys = parseTrustedKeys(PAIR.trustedKey);

const signer = new OrderSigner(TEST_SIGNING_KEY);

/** The headers the policy or approval service would put on this order: for tests that publish orders themselves. */
export function signedHeaders(order: ExecutionOrder): Record<string, string> {
  return signer.headersFor(order);
}
