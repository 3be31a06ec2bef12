import { fileURLToPath } from 'node:url';
import type { Options } from './command.js';
import type { Env } from './io.js';

// The repository's configuration, which the policy service loads by default
// (services/policy/src/config.ts). Relative to dist/, like the service's.
/** config/roles.json */
export const DEFAULT_ROLES_FILE = fileURLToPath(new URL('../../../config/roles.json', import.meta.url));
/** config/policy-table.json */
export const DEFAULT_POLICY_TABLE_FILE = fileURLToPath(new URL('../../../config/policy-table.json', import.meta.url));

/** The file `--<option>` names, else the environment variable, else `fallback`. An empty variable counts as unset. */
export function chosenFile(options: Options, option: string, env: Env, variable: string, fallback: string): string {
  const fromEnv = env[variable];
  return options.string(option) ?? (fromEnv === undefined || fromEnv === '' ? fallback : fromEnv);
}
