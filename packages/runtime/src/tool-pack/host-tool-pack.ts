import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Catalog, ToolImplementation } from '@gatehouse/contracts';
import type { PolicyTable, Roles } from '@gatehouse/governance';
import { describePack, readPackConfig, toolsOf, validatePack } from '@gatehouse/sdk';
import type { PackDescription, ToolPack } from '@gatehouse/sdk';
import { ToolPackLoadError } from './tool-pack-load-error.js';

/** Files that replace the pack's own documents (GATEHOUSE_ROLES_FILE, …; a deployment's ConfigMap). */
export interface PackOverrides {
  readonly rolesFile?: string | undefined;
  readonly policyTableFile?: string | undefined;
  readonly approversFile?: string | undefined;
  readonly approverPolicyFile?: string | undefined;
}

/** A pack set up and checked, as a service hosts it. */
export interface HostedPack {
  readonly name: string;
  readonly description: PackDescription;
  readonly catalog: Catalog;
  readonly implementations: readonly ToolImplementation[];
  readonly roles: Roles;
  readonly policyTable: PolicyTable;
  /** The roles and policy-table files in force (the pack's, or the overrides). */
  readonly rolesFile: string;
  readonly policyTableFile: string;
  /** The approvers file in force, when the pack ships one or an override names one. */
  readonly approversFile: string | undefined;
  /** The approver policy in force, when the pack ships one or an override names one. */
  readonly approverPolicyFile: string | undefined;
}

function readJson(file: string, what: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as unknown;
  } catch (error) {
    throw new ToolPackLoadError(`the ${what} ${file} cannot be read: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
}

/**
 * Sets a pack up the way every service hosts it: its shape checked, its own configuration read from
 * `env` and handed to `setup` once, its tools built, and its roles and policy table (or the files
 * that override them) checked against those tools. Every problem is named before anything starts.
 */
export async function hostToolPack(
  pack: ToolPack,
  env: Readonly<Record<string, string | undefined>>,
  overrides: PackOverrides = {},
): Promise<HostedPack> {
  const description = describePack(pack);
  const config = readPackConfig(pack, env);
  const deps: unknown = await pack.setup(config);
  const tools = toolsOf(pack, deps);
  const rolesFile = overrides.rolesFile ?? fileURLToPath(pack.roles);
  const policyTableFile = overrides.policyTableFile ?? fileURLToPath(pack.policyTable);
  const validated = validatePack(pack, {
    tools,
    roles: readJson(rolesFile, 'roles file'),
    policyTable: readJson(policyTableFile, 'policy table'),
  });
  return {
    name: validated.name,
    description,
    catalog: validated.catalog,
    implementations: validated.implementations,
    roles: validated.roles,
    policyTable: validated.policyTable,
    rolesFile,
    policyTableFile,
    approversFile: overrides.approversFile ?? (pack.approvers === undefined ? undefined : fileURLToPath(pack.approvers)),
    approverPolicyFile:
      overrides.approverPolicyFile ?? (pack.approverPolicy === undefined ? undefined : fileURLToPath(pack.approverPolicy)),
  };
}
