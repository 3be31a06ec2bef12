import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { GatehouseError } from '@gatehouse/contracts';
import { claimValues } from '@gatehouse/identity';
import type { VerifiedClaims } from '@gatehouse/identity';
import type { PersonRef, Run } from '@gatehouse/state';

/**
 * One rule of the agent policy: a person whose `claim` holds `value` gets a run of `role` (narrowed
 * to `capabilities` when given), in the tenant their `tenant_claim` names, for `run_ttl_ms`.
 */
export interface AgentRule {
  readonly claim: string;
  readonly value: string;
  readonly role: string;
  readonly capabilities?: readonly string[];
  /** The claim naming the person's tenant; it must hold exactly one value (default `tenant`). */
  readonly tenant_claim?: string;
  readonly environment?: string;
  readonly run_ttl_ms: number;
}

/** The deployment's document: which signed-in people an MCP client may act for, and as what. */
export interface AgentPolicyDocument {
  /** Claims tried in order for the person's display name (default: email, then preferred_username). */
  readonly display_claims?: readonly string[];
  /** Tried in order; the first rule the person's claims match decides. */
  readonly rules: readonly AgentRule[];
}

const NAME = '^[a-z][a-z0-9-]{0,63}$';
const CLAIM = '^[A-Za-z0-9_:/-]{1,100}(\\.[A-Za-z0-9_:/-]{1,100}){0,4}$';

const DOCUMENT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['rules'],
  properties: {
    $schema: { type: 'string' },
    $comment: { type: 'string' },
    display_claims: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 100 } },
    rules: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['claim', 'value', 'role', 'run_ttl_ms'],
        properties: {
          claim: { type: 'string', pattern: CLAIM },
          value: { type: 'string', minLength: 1, maxLength: 200 },
          role: { type: 'string', pattern: NAME },
          capabilities: {
            type: 'array',
            minItems: 1,
            uniqueItems: true,
            items: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,63}\\.v[1-9][0-9]{0,3}$' },
          },
          tenant_claim: { type: 'string', pattern: CLAIM },
          environment: { type: 'string', pattern: NAME },
          run_ttl_ms: { type: 'integer', minimum: 60_000, maximum: 7 * 24 * 3600 * 1000 },
          $comment: { type: 'string' },
        },
      },
    },
  },
} as const;

const ajv = new Ajv2020({ strict: true, allErrors: true });

/** An agent policy that failed its checks at start-up: every problem, listed. */
export class AgentPolicyError extends GatehouseError<'CONFIG_INVALID'> {
  constructor(message: string) {
    super('CONFIG_INVALID', message);
  }
}

/** What a person's verified token maps to: the run to act in, or why there is none. */
export type AgentOf =
  | {
      readonly ok: true;
      readonly run: Run;
      /** The longest the run may live from its sign-in, whatever tokens come: the rule's `run_ttl_ms`, within the bound. */
      readonly lifetimeMs: number;
    }
  | { readonly ok: false; readonly code: 'NOT_AN_AGENT_OWNER' | 'NO_TENANT'; readonly message: string };

/** The live tools of each role, as the pack defines them. */
export type RoleTools = Readonly<Record<string, readonly string[]>>;

/**
 * Who may have an MCP client act for them, from their claims at the identity provider. A person
 * signed in through an MCP client gets one run per sign-in session (issuer, subject and `sid`):
 * every instance computes the same run id, and a run an operator stopped stays stopped for that
 * session. The run lives no longer than the session's tokens: it expires with the token it was
 * registered with, and each newer token of the session moves that later, never past `run_ttl_ms`.
 */
export class AgentPolicy {
  private constructor(
    private readonly document: AgentPolicyDocument,
    private readonly roles: RoleTools,
    private readonly maxRunTtlMs: number,
  ) {}

  /** Checked at start-up: the schema, every role the pack's, every capability within its role. */
  static parse(document: unknown, roles: RoleTools, maxRunTtlMs: number): AgentPolicy {
    const validate = ajv.compile<AgentPolicyDocument>(DOCUMENT_SCHEMA);
    if (!validate(document)) {
      const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
      throw new AgentPolicyError(`the agent policy is not valid:\n- ${problems.join('\n- ')}`);
    }
    const problems: string[] = [];
    document.rules.forEach((rule, index) => {
      const tools = roles[rule.role];
      if (tools === undefined) {
        problems.push(`/rules/${index}/role: no role ${rule.role} in the pack (${Object.keys(roles).sort().join(', ')})`);
        return;
      }
      for (const address of rule.capabilities ?? []) {
        if (!tools.includes(address)) problems.push(`/rules/${index}/capabilities: ${address} is not a live tool of role ${rule.role}`);
      }
      if (rule.run_ttl_ms > maxRunTtlMs) problems.push(`/rules/${index}/run_ttl_ms: at most ${maxRunTtlMs}`);
    });
    if (problems.length > 0) throw new AgentPolicyError(`the agent policy is not valid:\n- ${problems.join('\n- ')}`);
    return new AgentPolicy(document, roles, maxRunTtlMs);
  }

  static load(path: string, roles: RoleTools, maxRunTtlMs: number): AgentPolicy {
    let document: unknown;
    try {
      document = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    } catch (error) {
      throw new AgentPolicyError(`the agent policy ${path} cannot be read: ${error instanceof Error ? error.message : String(error)}`);
    }
    return AgentPolicy.parse(document, roles, maxRunTtlMs);
  }

  /** The run a verified person acts in through an MCP client, as it would be registered now. */
  agentOf(claims: VerifiedClaims, registeredBy: string, now = Date.now()): AgentOf {
    const person = this.personOf(claims);
    const rule = this.document.rules.find((r) => claimValues(claims, r.claim).includes(r.value));
    if (rule === undefined)
      return {
        ok: false,
        code: 'NOT_AN_AGENT_OWNER',
        message: `${person.name ?? person.subject}'s claims match no rule of the agent policy`,
      };
    const tenants = claimValues(claims, rule.tenant_claim ?? 'tenant');
    const [tenant] = tenants;
    if (tenants.length !== 1 || tenant === undefined) {
      return {
        ok: false,
        code: 'NO_TENANT',
        message: `${rule.tenant_claim ?? 'tenant'} must name exactly one tenant for an agent's run; it names ${tenants.length}`,
      };
    }
    // One run per sign-in session: Keycloak, Okta and Entra ID name it `sid`; else the sign-in's time.
    const authTime = typeof claims['auth_time'] === 'number' ? claims['auth_time'] : claims.iat;
    const session = typeof claims['sid'] === 'string' ? claims['sid'] : `auth_time:${authTime ?? 0}`;
    const id = createHash('sha256').update(`${claims.iss}\n${claims.sub}\n${session}`).digest('hex').slice(0, 32);
    const tools = this.roles[rule.role] ?? [];
    const lifetimeMs = Math.min(rule.run_ttl_ms, this.maxRunTtlMs);
    return {
      ok: true,
      lifetimeMs,
      run: {
        run_id: `run_mcp_${id}`,
        tenant,
        principal: `agent:mcp:${(typeof claims['azp'] === 'string' ? claims['azp'] : 'client').slice(0, 120)}`,
        on_behalf_of: person,
        registered_by: { issuer: claims.iss, subject: null, client_id: registeredBy },
        role: rule.role,
        capabilities: [...(rule.capabilities ?? tools)].sort(),
        environment: rule.environment ?? 'production',
        created_at: now,
        expires_at: Math.min(now + lifetimeMs, claims.exp * 1000),
        stopped_at: null,
      },
    };
  }

  private personOf(claims: VerifiedClaims): PersonRef {
    for (const claim of this.document.display_claims ?? ['email', 'preferred_username']) {
      const [value] = claimValues(claims, claim);
      if (value !== undefined && value.length > 0) return { issuer: claims.iss, subject: claims.sub, name: value.slice(0, 200) };
    }
    return { issuer: claims.iss, subject: claims.sub, name: null };
  }
}
