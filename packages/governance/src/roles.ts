import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Catalog } from '@gatehouse/contracts';

/** A role: the tools its runs get by default. Read-only roles never see write tools. */
export interface Role {
  readonly description: string;
  readonly readOnly: boolean;
  readonly tools: readonly string[];
}

export type Roles = Readonly<Record<string, Role>>;

/** The JSON Schema of a roles file (published as @gatehouse/sdk/schemas/roles.schema.json). */
export const ROLES_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['roles'],
  properties: {
    $schema: { type: 'string' },
    roles: {
      type: 'object',
      minProperties: 1,
      propertyNames: { pattern: '^[a-z][a-z0-9-]*$' },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['description', 'readOnly', 'tools'],
        properties: {
          description: { type: 'string', minLength: 1 },
          readOnly: { type: 'boolean' },
          tools: { type: 'array', uniqueItems: true, items: { type: 'string', pattern: '^[a-z][a-z0-9_]*\\.v[1-9][0-9]*$' } },
        },
      },
    },
  },
} as const;

const validate = new Ajv2020({ strict: true, allErrors: true }).compile(ROLES_SCHEMA);

/**
 * Parses and checks a roles document against the catalog, once at start-up: every tool exists, and
 * a read-only role holds no write tool. Throws with every problem listed.
 */
export function parseRoles(document: unknown, catalog: Catalog): Roles {
  const raw: unknown = document;
  if (!validate(raw)) {
    const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
    throw new Error(`roles file is invalid: ${problems.join('; ')}`);
  }
  const roles = (document as { roles: Record<string, Role> }).roles;
  const problems: string[] = [];
  for (const [name, role] of Object.entries(roles)) {
    for (const address of role.tools) {
      const found = catalog.lookup(address);
      if (!found.ok) problems.push(`role ${name}: ${address} is not in the catalog`);
      else if (role.readOnly && found.tool.effect === 'write')
        problems.push(`role ${name} is read-only but lists the write tool ${address}`);
    }
  }
  if (problems.length > 0) throw new Error(`roles file is invalid: ${problems.join('; ')}`);
  return roles;
}

export function loadRoles(path: string, catalog: Catalog): Roles {
  return parseRoles(JSON.parse(readFileSync(path, 'utf8')) as unknown, catalog);
}

const NONE: readonly string[] = Object.freeze([]);

/**
 * Which roles list a tool, to tell a run denied it which path would serve. Built once from the
 * roles; the answer for an address is a shared frozen list, in the roles document's order.
 */
export function rolesGranting(roles: Roles): (address: string) => readonly string[] {
  const granting = new Map<string, string[]>();
  for (const [name, role] of Object.entries(roles)) {
    for (const address of role.tools) {
      const names = granting.get(address);
      if (names === undefined) granting.set(address, [name]);
      else names.push(name);
    }
  }
  for (const names of granting.values()) Object.freeze(names);
  return (address) => granting.get(address) ?? NONE;
}
