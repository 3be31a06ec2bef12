import { ConfigError } from './config-error.js';
import type { Refusal } from './config-error.js';
import type { Env } from './env.js';
import { unknownVariables } from './unknown-variables.js';
import { VARIABLES } from './variables.js';
import type { Config, VariableName } from './variables.js';
import type { Component } from './component.js';
import type { Variable } from './variable.js';

const SHOWN_MAX = 80;

function shown(raw: string): string {
  return JSON.stringify(raw.length > SHOWN_MAX ? `${raw.slice(0, SHOWN_MAX)}…` : raw);
}

/**
 * Reads `names` from `env` by the schema, once, at start-up. An empty value is unset. Throws one
 * ConfigError (`CONFIG_INVALID`) that names every refused variable: each malformed, out-of-range or
 * missing one among `names`, and every set variable under a reserved prefix that no Gatehouse
 * program knows. `reader`: the program reading, for the variables only some readers require.
 */
export function readConfig<N extends VariableName>(names: readonly N[], env: Env, reader?: Component): Config<N> {
  const values: Partial<Record<VariableName, unknown>> = {};
  const refusals: Refusal[] = [];
  for (const name of names) {
    const variable: Variable<unknown> = VARIABLES[name];
    const raw = env[name];
    const set = raw !== undefined && raw !== '';
    const required = !set && reader !== undefined && variable.requiredFor?.readers.includes(reader) === true;
    const parsed = set
      ? variable.parse(raw)
      : required
        ? { ok: false as const, reason: `required: ${variable.requiredFor?.reason ?? ''}` }
        : variable.unset;
    if (parsed.ok) {
      values[name] = parsed.value;
      continue;
    }
    if (variable.secret) {
      // Neither the value nor what a parser made of it: a URL parser's error carries its input.
      refusals.push({ variable: name, reason: set ? parsed.reason.split(raw).join('(the value)') : parsed.reason });
      continue;
    }
    const got = set ? `, got ${shown(raw)}` : '';
    refusals.push({ variable: name, reason: `${parsed.reason}${got}`, ...(parsed.cause === undefined ? {} : { cause: parsed.cause }) });
  }
  refusals.push(...unknownVariables(env));
  if (refusals.length > 0) throw new ConfigError(refusals);
  // Every name was parsed by its own variable, so each property has the type Config<N> gives it.
  return values as Config<N>;
}
