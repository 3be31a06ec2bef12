import { Catalog, ContractError } from '@gatehouse/contracts';
import type { ToolImplementation } from '@gatehouse/contracts';
import { parseRoles, PolicyTable } from '@gatehouse/governance';
import type { Roles } from '@gatehouse/governance';
import { configSpecProblems } from './pack-config.js';
import { PackError } from './pack-error.js';
import type { ToolPack } from './tool-pack.js';

/** Lower-case words joined by `-`, like role names. */
export const PACK_NAME_PATTERN = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

export interface PackVariable {
  readonly name: string;
  readonly doc: string;
  readonly default: string | null;
  readonly required: boolean;
  readonly secret: boolean;
}

/** What a pack declares, for people and tooling (`gatehouse pack check`), without running any of it. */
export interface PackDescription {
  readonly name: string;
  readonly variables: readonly PackVariable[];
  readonly roles: string;
  readonly policyTable: string;
  readonly approvers: string | null;
  readonly approverPolicy: string | null;
}

/** What a pack yields once set up: its tools as `tools(deps)` returned them, and its documents as parsed JSON. */
export interface PackContents {
  readonly tools: readonly ToolImplementation[];
  /** The roles document: the file `pack.roles` names, or an override of it. */
  readonly roles: unknown;
  /** The policy table: the file `pack.policyTable` names, or an override of it. */
  readonly policyTable: unknown;
}

/** A pack whose tools, roles and table were checked against each other: what a service hosts. */
export interface ValidatedPack {
  readonly name: string;
  readonly catalog: Catalog;
  readonly implementations: readonly ToolImplementation[];
  readonly roles: Roles;
  readonly policyTable: PolicyTable;
}

/** A pack written in JavaScript may return anything from `tools`. */
const isList = (value: readonly unknown[]): boolean => Array.isArray(value);
const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));
const nameOf = (pack: ToolPack): string => (typeof pack.name === 'string' && pack.name !== '' ? pack.name : '(unnamed)');

function fileProblem(field: string, url: unknown, optional: boolean): string[] {
  if (url === undefined && optional) return [];
  return url instanceof URL && url.protocol === 'file:' ? [] : [`${field}: must be a file: URL of the document`];
}

function shapeProblems(pack: ToolPack): string[] {
  const problems: string[] = [];
  if (typeof pack.name !== 'string' || !PACK_NAME_PATTERN.test(pack.name)) problems.push(`name: must match ${PACK_NAME_PATTERN.source}`);
  if (typeof pack.config !== 'object' || pack.config === null) problems.push('config: must be an object of variables');
  else problems.push(...configSpecProblems(pack.config));
  problems.push(...fileProblem('roles', pack.roles, false), ...fileProblem('policyTable', pack.policyTable, false));
  problems.push(...fileProblem('approvers', pack.approvers, true), ...fileProblem('approverPolicy', pack.approverPolicy, true));
  if (typeof pack.setup !== 'function') problems.push('setup: must be a function of the configuration');
  if (typeof pack.tools !== 'function') problems.push('tools: must be a function of what setup returns');
  if (pack.credential !== undefined && typeof pack.credential !== 'function')
    problems.push('credential: must be a function of what setup returns');
  return problems;
}

/**
 * Checks the shape of a pack without running any of it — its name, its variables (names outside
 * Gatehouse's reserved prefixes, docs, defaults that parse), its document URLs — and describes it.
 * Throws PackError (`PACK_INVALID`) listing every problem.
 */
export function describePack(pack: ToolPack): PackDescription {
  const problems = shapeProblems(pack);
  if (problems.length > 0) throw new PackError('PACK_INVALID', nameOf(pack), problems);
  return {
    name: pack.name,
    variables: Object.entries(pack.config).map(([name, v]) => ({
      name,
      doc: v.doc,
      default: v.default ?? null,
      required: v.required === true,
      secret: v.secret === true,
    })),
    roles: pack.roles.href,
    policyTable: pack.policyTable.href,
    approvers: pack.approvers?.href ?? null,
    approverPolicy: pack.approverPolicy?.href ?? null,
  };
}

const AUDIENCE = /^[\x21-\x7e]{1,255}$/;

/** A declared credential: `{ audience }`, an audience a JWT can carry, or `{ exchange: { audience, scope? } }`. */
function credentialProblems(address: string, credential: unknown): string[] {
  if (credential === undefined) return [];
  const shape = `tool ${address}: credential must be { audience } or { exchange: { audience, scope? } }`;
  if (typeof credential !== 'object' || credential === null) return [shape];
  if ('exchange' in credential) {
    const { exchange, ...others } = credential;
    if (typeof exchange !== 'object' || exchange === null) return [shape];
    const { audience, scope, ...rest } = exchange as { audience?: unknown; scope?: unknown };
    const problems = audienceProblems(address, 'credential.exchange.audience', audience);
    if (scope !== undefined && (typeof scope !== 'string' || !SCOPE.test(scope)))
      problems.push(`tool ${address}: credential.exchange.scope must be space-separated scope names`);
    for (const name of Object.keys(rest))
      problems.push(`tool ${address}: credential.exchange.${name} is not an exchange setting (audience, scope)`);
    for (const name of Object.keys(others)) problems.push(`tool ${address}: credential.${name} does not go with exchange`);
    return problems;
  }
  const { audience, ...rest } = credential as { audience?: unknown };
  const problems = audienceProblems(address, 'credential.audience', audience);
  for (const name of Object.keys(rest))
    problems.push(`tool ${address}: credential.${name} is not a credential setting (only audience, or exchange)`);
  return problems;
}

// RFC 6749 §3.3: scope tokens are printable ASCII without spaces, quotes or backslashes.
const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/;

function audienceProblems(address: string, name: string, audience: unknown): string[] {
  return typeof audience === 'string' && AUDIENCE.test(audience)
    ? []
    : [`tool ${address}: ${name} must be 1..255 printable ASCII characters without spaces`];
}

function toolProblems(tools: readonly ToolImplementation[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const tool of tools) {
    const address = tool.contract.address;
    if (typeof tool.run !== 'function') problems.push(`tool ${address}: has no run handler`);
    if (seen.has(address)) problems.push(`tool ${address}: is implemented twice`);
    seen.add(address);
    if (tool.contract.commits !== undefined && typeof tool.propose !== 'function') {
      problems.push(`tool ${address}: a preview (commits ${tool.contract.commits}) must propose`);
    }
    problems.push(...credentialProblems(address, tool.credential));
  }
  return problems;
}

/**
 * Checks a set-up pack as a service would host it, purely: its shape (`describePack`), its tools (one
 * implementation per address, every preview proposes, the catalog loads: lint, schemas, pairs), the
 * roles against the catalog (every tool exists, no write under a read-only role) and the policy
 * table against it (every tool and approval rule named exists). Throws PackError (`PACK_INVALID`)
 * listing every problem, each naming the part that is wrong.
 */
export function validatePack(pack: ToolPack, contents: PackContents): ValidatedPack {
  const problems = shapeProblems(pack);
  const listed = isList(contents.tools);
  const tools = listed ? contents.tools : [];
  if (!listed) problems.push('tools: must return an array of implementations');
  problems.push(...toolProblems(tools));
  let catalog: Catalog | undefined;
  try {
    // One contract per address: a second implementation is reported above, not again by the catalog.
    catalog = Catalog.load([...new Map(tools.map((t) => [t.contract.address, t.contract])).values()]);
  } catch (error) {
    if (!(error instanceof ContractError)) throw error;
    problems.push(...error.problems.map((p) => `tool ${p}`));
  }
  let roles: Roles | undefined;
  let policyTable: PolicyTable | undefined;
  if (catalog !== undefined) {
    try {
      roles = parseRoles(contents.roles, catalog);
    } catch (error) {
      problems.push(`roles: ${reason(error)}`);
    }
    try {
      policyTable = PolicyTable.parse(contents.policyTable, catalog.tools());
    } catch (error) {
      problems.push(`policyTable: ${reason(error)}`);
    }
  }
  if (problems.length > 0 || catalog === undefined || roles === undefined || policyTable === undefined) {
    throw new PackError('PACK_INVALID', nameOf(pack), problems);
  }
  return { name: pack.name, catalog, implementations: tools, roles, policyTable };
}
