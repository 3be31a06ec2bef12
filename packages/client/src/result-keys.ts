import { KEY_ROLES, keyRingFromEnv } from '@gatehouse/events';
import type { KeyRing } from '@gatehouse/events';

/**
 * The keys of every service that answers agents, from GATEHOUSE_POLICY_KEYS, GATEHOUSE_APPROVAL_KEYS
 * and GATEHOUSE_EXECUTOR_KEYS; each is required.
 */
export function resultKeysFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): KeyRing {
  return keyRingFromEnv(env, KEY_ROLES, 'the client delivers only answers a Gatehouse service signed (or give resultKeys)');
}
