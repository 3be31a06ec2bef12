import type { Catalog } from '@gatehouse/contracts';
import type { Roles } from './roles.js';

/** What trusted code asks a run to be granted: a role, a lifetime, and optionally fewer tools. */
export interface RunRequest {
  readonly role: string;
  readonly ttlMs: number;
  /** A narrowing of the role's tools; all of them when absent. */
  readonly capabilities?: readonly string[] | undefined;
}

/** The run's capabilities (sorted), or why the request is refused, with the HTTP APIs' code. */
export type RunGrant =
  | { readonly ok: true; readonly capabilities: readonly string[] }
  | {
      readonly ok: false;
      readonly code: 'UNKNOWN_ROLE' | 'TTL_TOO_LONG' | 'CAPABILITY_OUTSIDE_ROLE';
      readonly message: string;
      /** The roles there are, or the role's live tools. */
      readonly permitted?: readonly string[];
    };

/** A role's tools that a new run may be granted: every one but the retired versions. */
export function liveToolsOf(roles: Roles, role: string, catalog: Catalog): readonly string[] {
  return (roles[role]?.tools ?? []).filter((address) => catalog.get(address)?.retired !== true);
}

/**
 * The rules of registering a run: the role exists, the lifetime is within the deployment's bound,
 * and the run is narrowed from its role, never widened, and never newly granted a retired version.
 */
export function grantRun(roles: Roles, catalog: Catalog, request: RunRequest, maxRunTtlMs: number): RunGrant {
  if (roles[request.role] === undefined) {
    return { ok: false, code: 'UNKNOWN_ROLE', message: `no role ${request.role}`, permitted: Object.keys(roles) };
  }
  if (request.ttlMs > maxRunTtlMs) return { ok: false, code: 'TTL_TOO_LONG', message: `ttl_ms may be at most ${maxRunTtlMs}` };
  const live = liveToolsOf(roles, request.role, catalog);
  const capabilities = request.capabilities ?? live;
  const outside = capabilities.filter((address) => !live.includes(address));
  if (outside.length > 0) {
    return {
      ok: false,
      code: 'CAPABILITY_OUTSIDE_ROLE',
      message: `not grantable to role ${request.role}: ${outside.join(', ')}`,
      permitted: live,
    };
  }
  return { ok: true, capabilities: [...capabilities].sort() };
}
