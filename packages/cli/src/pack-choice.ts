import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import type { OptionSpec, Options } from './command.js';
import { usageError } from './exit-code.js';
import type { Env } from './io.js';

/** The variable that names the tool pack when `--pack` is not given, as the services read it. */
const PACK_VARIABLE = 'GATEHOUSE_TOOL_PACK';
/** The variable that names a roles document replacing the pack's own. */
const ROLES_FILE_VARIABLE = 'GATEHOUSE_ROLES_FILE';
/** The variable that names a policy table replacing the pack's own. */
const POLICY_TABLE_FILE_VARIABLE = 'GATEHOUSE_POLICY_TABLE_FILE';

/** `--pack`, for every command that works on a pack's catalog. */
export const PACK_OPTION: OptionSpec = {
  type: 'string',
  value: 'pack',
  description: `tool pack: a package name or a path, with #<export> to pick one of several (default: ${PACK_VARIABLE})`,
};

/** `--roles-file`: the pack’s own roles document unless given. */
export const ROLES_FILE_OPTION: OptionSpec = {
  type: 'string',
  value: 'path',
  description: `roles document replacing the pack’s own (default: ${ROLES_FILE_VARIABLE}, else the pack’s)`,
};

/** `--policy-table`: the pack’s own policy table unless given. */
export const POLICY_TABLE_OPTION: OptionSpec = {
  type: 'string',
  value: 'file',
  description: `policy table replacing the pack’s own (default: ${POLICY_TABLE_FILE_VARIABLE}, else the pack’s)`,
};

/** A variable's value; empty or blank counts as unset. */
function variable(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

/** The pack a command works on: `--pack`, else GATEHOUSE_TOOL_PACK; neither is a usage error naming both. */
export function chosenPack(options: Options, env: Env): string {
  const pack = options.string('pack') ?? variable(env, PACK_VARIABLE);
  if (pack === undefined || pack.trim() === '') {
    throw usageError(
      `no tool pack: pass --pack <package name or path> or set ${PACK_VARIABLE} (e.g. @acme/billing-tools, ./packs/billing, ./index.mjs#billingPack)`,
    );
  }
  return pack;
}

/** Documents that replace the pack’s own, as `hostToolPack` takes them; unset means the pack’s. */
export interface DocumentOverrides {
  readonly rolesFile?: string | undefined;
  readonly policyTableFile?: string | undefined;
}

/**
 * The roles document and policy table the command line names instead of the pack’s own: the option
 * (when the subcommand declares it), else the variable. A file that does not exist is a usage error.
 */
export function chosenDocuments(options: Options, env: Env): DocumentOverrides {
  const rolesFile = options.string('roles-file') ?? variable(env, ROLES_FILE_VARIABLE);
  const policyTableFile = options.string('policy-table') ?? variable(env, POLICY_TABLE_FILE_VARIABLE);
  if (rolesFile !== undefined && !existsSync(rolesFile)) throw usageError(`no roles file at ${rolesFile}`);
  if (policyTableFile !== undefined && !existsSync(policyTableFile)) throw usageError(`no policy table at ${policyTableFile}`);
  return { rolesFile, policyTableFile };
}

/** How a path is written so the loader takes it for a path, not a package name: `packs/billing` → `./packs/billing`. */
export function asPathSpecifier(path: string): string {
  return path.startsWith('.') || isAbsolute(path) ? path : `./${path}`;
}

/**
 * A hint for a specifier the loader took for a package name although a file or directory of that
 * name is right here (`my-pack` → `./my-pack`); empty otherwise.
 */
export function pathHint(specifier: string): string {
  const [target = ''] = specifier.split('#', 1);
  if (target === '' || asPathSpecifier(target) === target || !existsSync(target)) return '';
  return ` (a package name; for the path here write ${asPathSpecifier(specifier)})`;
}
