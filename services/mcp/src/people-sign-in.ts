import { AccessTokenVerifier, TokenSealer } from '@gatehouse/identity';
import type { Catalog } from '@gatehouse/contracts';
import { liveToolsOf } from '@gatehouse/governance';
import type { Roles } from '@gatehouse/governance';
import { AgentPolicy } from './agent-policy.js';
import type { RoleTools } from './agent-policy.js';
import type { McpConfig } from './config.js';
import type { PeopleSignIn } from './mcp-auth.js';

/** Each role's live tools (a retired version is never newly granted), as the control API grants them. */
export function liveRoleTools(roles: Roles, catalog: Catalog): RoleTools {
  return Object.fromEntries(Object.keys(roles).map((name) => [name, liveToolsOf(roles, name, catalog)]));
}

/**
 * Sign-in for people through their MCP client, checked at start-up: the agent policy against the
 * pack's roles, and the IdP's keys by discovery. Tokens must name `resource` as their audience.
 */
export async function peopleSignIn(
  config: NonNullable<McpConfig['signIn']>,
  resource: string,
  roles: Roles,
  catalog: Catalog,
): Promise<PeopleSignIn> {
  const policy = AgentPolicy.load(config.agentPolicyFile, liveRoleTools(roles, catalog), config.maxRunTtlMs);
  const verifier = await AccessTokenVerifier.discover({ issuer: config.issuer, audience: resource });
  return {
    verifier,
    policy,
    scope: config.scope,
    ...(config.delegation === undefined
      ? {}
      : { delegation: { clientId: config.delegation.clientId, sealer: new TokenSealer(config.delegation.sealingKeys) } }),
  };
}
