import type { Component } from './component.js';
import { APPROVAL_VARIABLES } from './approval-variables.js';
import { CLI_VARIABLES } from './cli-variables.js';
import { EVENTS_VARIABLES } from './events-variables.js';
import { EXECUTOR_VARIABLES } from './executor-variables.js';
import { MCP_VARIABLES } from './mcp-variables.js';
import { POLICY_VARIABLES } from './policy-variables.js';
import { SHARED_VARIABLES } from './shared-variables.js';
import { TRACING_VARIABLES } from './tracing-variables.js';
import type { Variable } from './variable.js';

/**
 * Every Gatehouse environment variable, in the order of docs/configuration.md, whose table is
 * generated from it (scripts/readme-tables.mjs) and a test holds the two together.
 */
export const VARIABLES = {
  ...EVENTS_VARIABLES,
  ...SHARED_VARIABLES,
  ...POLICY_VARIABLES,
  ...EXECUTOR_VARIABLES,
  ...APPROVAL_VARIABLES,
  ...MCP_VARIABLES,
  ...CLI_VARIABLES,
  ...TRACING_VARIABLES,
} satisfies Record<string, Variable<unknown>>;

export type VariableName = keyof typeof VARIABLES;

/** Every name of the schema, in the order of docs/configuration.md. */
export const VARIABLE_NAMES = Object.freeze(Object.keys(VARIABLES)) as readonly VariableName[];

/** The type a variable reads as: `number` for `POLICY_PORT`, `string | undefined` for `POLICY_GROUP_ID`. */
export type ValueOf<N extends VariableName> = (typeof VARIABLES)[N] extends Variable<infer T, readonly Component[]> ? T : never;

/** What `readConfig` returns for a set of names: one typed property per variable, keyed by its name. */
export type Config<N extends VariableName> = { readonly [K in N]: ValueOf<K> };

/** The names whose `readers` include `C`. */
export type ReadBy<C extends Component> = {
  [N in VariableName]: C extends (typeof VARIABLES)[N]['readers'][number] ? N : never;
}[VariableName];

export function isVariableName(name: string): name is VariableName {
  return Object.hasOwn(VARIABLES, name);
}

/** The names the schema says `component` reads, in schema order. */
export function variablesReadBy<C extends Component>(component: C): readonly ReadBy<C>[] {
  return VARIABLE_NAMES.filter((name): name is ReadBy<C> => (VARIABLES[name].readers as readonly Component[]).includes(component));
}
