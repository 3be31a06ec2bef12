import { TEST_FRONT_DOOR_KEYS, TEST_SIGNING_KEYS } from './signing.js';
import { logger } from './stack.js';

/**
 * What a test's in-process policy service starts with besides its stack, catalog and rules: the
 * test keys, a free loopback port, the limits, and its consumer group (`<label>-policy`).
 */
export function testPolicySettings(label: string, instanceId: string, controlToken: string) {
  return {
    logger,
    controlToken,
    signingKey: TEST_SIGNING_KEYS.policy,
    frontDoorKeys: TEST_FRONT_DOOR_KEYS,
    host: '127.0.0.1',
    port: 0,
    maxArgumentBytes: 64 * 1024,
    maxRunTtlMs: 3600_000,
    groupId: `${label}-policy`,
    concurrency: 64,
    instanceId,
  } as const;
}
