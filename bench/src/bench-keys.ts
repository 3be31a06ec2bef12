import { generateSigningKey, keyRing, parseTrustedKeys } from '@gatehouse/events';
import type { KeyRing } from '@gatehouse/events';

/**
 * The bench's signing pairs, one per service role as in a deployment: made once in the bench
 * process and handed to each service process it starts.
 */
export const BENCH_KEYS = {
  policy: generateSigningKey('bench-policy'),
  executor: generateSigningKey('bench-executor'),
  assertion: generateSigningKey('bench-assertion'),
  /** The MCP front door's: it proves its clients' commands with it. */
  mcp: generateSigningKey('bench-mcp'),
} as const;

/** What the front door in the bench process checks answers with. */
export function benchResultKeys(): KeyRing {
  return keyRing({ policy: parseTrustedKeys(BENCH_KEYS.policy.trustedKey), executor: parseTrustedKeys(BENCH_KEYS.executor.trustedKey) });
}
