import { GatehouseError } from '@gatehouse/contracts';
import { Ajv2020 } from 'ajv/dist/2020.js';

/**
 * One line of a claims mapping: a person whose `claim` holds `value` (a string claim equal to it,
 * or an array claim containing it) is granted these roles and these tenants.
 */
export interface ClaimGrant {
  /** A claim name, or a dotted path into nested claims (`realm_access.roles`). */
  readonly claim: string;
  readonly value: string;
  readonly roles?: readonly string[];
  readonly tenants?: readonly string[];
}

/** What a person's claims add up to under a mapping. */
export interface Granted {
  readonly roles: readonly string[];
  readonly tenants: readonly string[];
}

const NAME = '^[a-z][a-z0-9-]{0,63}$';
const TENANT = '^[a-z0-9][a-z0-9-]{0,62}$';

/** The JSON Schema of a mapping's `grants` array (documents embed it under their own name). */
export const GRANTS_SCHEMA = {
  type: 'array',
  minItems: 1,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['claim', 'value'],
    properties: {
      claim: { type: 'string', pattern: '^[A-Za-z0-9_:/-]{1,100}(\\.[A-Za-z0-9_:/-]{1,100}){0,4}$' },
      value: { type: 'string', minLength: 1, maxLength: 200 },
      roles: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', pattern: NAME } },
      tenants: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', pattern: TENANT } },
      $comment: { type: 'string' },
    },
  },
} as const;

/** The approver policy a pack or a deployment ships: claims tried for a person's display name, and the grants. */
export const APPROVER_POLICY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['grants'],
  properties: {
    $schema: { type: 'string' },
    $comment: { type: 'string' },
    display_claims: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 100 } },
    grants: GRANTS_SCHEMA,
  },
} as const;

/** The string values a claim holds: a string is one value, an array its string members; anything else none. */
export function claimValues(claims: Readonly<Record<string, unknown>>, path: string): readonly string[] {
  let here: unknown = claims;
  for (const part of path.split('.')) {
    if (typeof here !== 'object' || here === null || Array.isArray(here) || !Object.hasOwn(here, part)) return [];
    here = (here as Record<string, unknown>)[part];
  }
  if (typeof here === 'string') return [here];
  if (Array.isArray(here)) return here.filter((v): v is string => typeof v === 'string');
  return [];
}

/** Every role and tenant the grants give a person with these claims (sorted, each once). */
export function grantedBy(grants: readonly ClaimGrant[], claims: Readonly<Record<string, unknown>>): Granted {
  const roles = new Set<string>();
  const tenants = new Set<string>();
  for (const grant of grants) {
    if (!claimValues(claims, grant.claim).includes(grant.value)) continue;
    for (const role of grant.roles ?? []) roles.add(role);
    for (const tenant of grant.tenants ?? []) tenants.add(tenant);
  }
  return { roles: [...roles].sort(), tenants: [...tenants].sort() };
}

/** A mapping document that failed its checks: every problem, listed. */
export class ClaimMappingError extends GatehouseError<'CONFIG_INVALID'> {
  constructor(message: string, options?: ErrorOptions) {
    super('CONFIG_INVALID', message, { cause: options?.cause });
  }
}

const ajv = new Ajv2020({ strict: true, allErrors: true });

/**
 * Checks a mapping document against `schema` (Ajv), then that every role its grants name is one
 * of `knownRoles`; throws ClaimMappingError listing every problem, naming the document.
 */
export function checkGrants<T extends { readonly grants: readonly ClaimGrant[] }>(
  what: string,
  schema: object,
  document: unknown,
  knownRoles: ReadonlySet<string>,
): T {
  const validate = ajv.compile<T>(schema);
  if (!validate(document)) {
    const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
    throw new ClaimMappingError(`${what} is invalid: ${problems.join('; ')}`);
  }
  const empty = document.grants.flatMap((g, i) =>
    (g.roles ?? []).length + (g.tenants ?? []).length === 0 ? [`/grants/${i} grants neither roles nor tenants`] : [],
  );
  if (empty.length > 0) throw new ClaimMappingError(`${what} is invalid: ${empty.join('; ')}`);
  const unknown = [...new Set(document.grants.flatMap((g) => g.roles ?? []).filter((r) => !knownRoles.has(r)))];
  if (unknown.length > 0) {
    throw new ClaimMappingError(
      `${what} grants roles no rule asks for: ${unknown.join(', ')} (known: ${[...knownRoles].sort().join(', ') || 'none'})`,
    );
  }
  return document;
}
