import { closestName } from './closest-name.js';
import type { Refusal } from './config-error.js';
import type { Env } from './env.js';
import { isReserved, TOOLING_VARIABLES } from './reserved-names.js';
import { isVariableName, VARIABLE_NAMES } from './variables.js';

const KNOWN: readonly string[] = [...VARIABLE_NAMES, ...Object.keys(TOOLING_VARIABLES)];

/**
 * The set variables under a reserved prefix that no Gatehouse program knows, each refused with the
 * nearest known name when one is a likely typo. Empty values count as unset and are never refused.
 */
export function unknownVariables(env: Env): Refusal[] {
  const refusals: Refusal[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value === '' || !isReserved(name)) continue;
    if (isVariableName(name) || Object.hasOwn(TOOLING_VARIABLES, name)) continue;
    const nearest = closestName(name, KNOWN);
    const hint = nearest === undefined ? '' : `; did you mean ${nearest}?`;
    refusals.push({ variable: name, reason: `not a Gatehouse variable${hint}` });
  }
  return refusals.sort((a, b) => (a.variable < b.variable ? -1 : 1));
}
