import { readFileSync } from 'node:fs';
import { PackError } from './pack-error.js';

/**
 * Name prefixes Gatehouse owns for its own variables (the same list as @gatehouse/runtime's
 * RESERVED_PREFIXES): a pack's variables live outside them, so a service can refuse a mistyped
 * Gatehouse variable without knowing the pack.
 */
export const RESERVED_PREFIXES = ['GATEHOUSE_', 'POLICY_', 'EXECUTOR_', 'APPROVAL_', 'APPROVALS_'] as const;

/** An environment variable name: capitals, digits and `_`, starting with a capital. */
export const CONFIG_NAME_PATTERN = /^[A-Z][A-Z0-9_]*$/;

/** One environment variable of a pack. */
export interface ConfigVariable<T = unknown> {
  /** One line: what the variable is for. */
  readonly doc: string;
  /** The value when unset or empty, written as environment text and parsed like a set value. */
  readonly default?: string;
  /** Unset (and no default) is refused at start-up instead of giving `undefined`. */
  readonly required?: boolean;
  /**
   * Never echoed in a refusal: it may carry a password or token. A secret may also come from a
   * file, as Kubernetes mounts secrets: `NAME_FILE` names it, and its content (less one trailing
   * newline) is the value. Setting both `NAME` and `NAME_FILE` is refused.
   */
  readonly secret?: boolean;
  /** Turns the raw text into the value, throwing an Error that says why a value is refused. Default: the text. */
  readonly parse?: (raw: string) => T;
}

/** A pack's variables by name. */
export type ConfigSpec = Readonly<Record<string, ConfigVariable>>;

type ParsedOf<V> = V extends { readonly parse: (raw: string) => infer T } ? T : string;

/** The value of one variable: parsed; `undefined` only when it may be unset and has no default. */
export type ConfigValue<V> = V extends { readonly default: string } | { readonly required: true } ? ParsedOf<V> : ParsedOf<V> | undefined;

/** The configuration `setup` receives, typed from the pack's spec. */
export type PackConfig<C extends ConfigSpec> = { readonly [K in keyof C]: ConfigValue<C[K]> };

/** Environment text by name, as `process.env`. */
export type Env = Readonly<Record<string, string | undefined>>;

const SHOWN_MAX = 80;
const shown = (raw: string): string => JSON.stringify(raw.length > SHOWN_MAX ? `${raw.slice(0, SHOWN_MAX)}…` : raw);
const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** Problems of the spec itself, one line each naming the variable: names, docs, defaults that do not parse. */
export function configSpecProblems(spec: ConfigSpec): string[] {
  const problems: string[] = [];
  for (const [name, variable] of Object.entries(spec)) {
    const at = `config ${name}`;
    if (!CONFIG_NAME_PATTERN.test(name)) problems.push(`${at}: a variable name matches ${CONFIG_NAME_PATTERN.source}`);
    const prefix = RESERVED_PREFIXES.find((p) => name.startsWith(p));
    if (prefix !== undefined) problems.push(`${at}: the prefix ${prefix} is reserved for Gatehouse's own variables`);
    if (typeof variable.doc !== 'string' || variable.doc.trim() === '') problems.push(`${at}: doc must say what the variable is for`);
    if (variable.required === true && variable.default !== undefined) problems.push(`${at}: a required variable has no default`);
    if (variable.parse !== undefined && typeof variable.parse !== 'function') problems.push(`${at}: parse must be a function`);
    if (variable.default !== undefined) {
      try {
        variable.parse?.(variable.default);
      } catch (error) {
        problems.push(`${at}: the default ${shown(variable.default)} is refused: ${reason(error)}`);
      }
    }
  }
  return problems;
}

/** Reads a secret's file; a refusal names the file and why, never its content. */
export type ReadSecretFile = (path: string) => string;

const readSecretFile: ReadSecretFile = (path) => readFileSync(path, 'utf8');

/** A secret's raw text: from `NAME`, or from the file `NAME_FILE` names; a refusal when it cannot be read. */
function secretText(name: string, env: Env, read: ReadSecretFile): { text: string | undefined } | { problem: string } {
  const raw = env[name];
  const file = env[`${name}_FILE`];
  if (file === undefined || file === '') return { text: raw };
  if (raw !== undefined && raw !== '') return { problem: `${name}: set either ${name} or ${name}_FILE, not both` };
  try {
    return { text: read(file).replace(/\r?\n$/, '') };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return { problem: `${name}: ${name}_FILE names ${shown(file)}, which cannot be read${typeof code === 'string' ? ` (${code})` : ''}` };
  }
}

/** A refusal's reason for a secret, with the value itself taken out should the parser have quoted it. */
const withheld = (why: string, text: string): string => (text.length === 0 ? why : why.split(text).join('(the value)'));

/**
 * Reads a pack's variables from `env`, once, at start-up: an empty value is unset; unset takes the
 * default, is refused when required, else is `undefined`. A secret may come from the file its
 * `NAME_FILE` names. Throws one PackError (`PACK_CONFIG_INVALID`) naming every refused variable,
 * never a secret's value.
 */
export function readPackConfig<C extends ConfigSpec>(
  pack: { readonly name: string; readonly config: C },
  env: Env,
  read: ReadSecretFile = readSecretFile,
): PackConfig<C> {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, variable] of Object.entries(pack.config)) {
    let raw = env[name];
    if (variable.secret === true) {
      const secret = secretText(name, env, read);
      if ('problem' in secret) {
        problems.push(secret.problem);
        continue;
      }
      raw = secret.text;
    }
    const text = raw === undefined || raw === '' ? variable.default : raw;
    if (text === undefined) {
      if (variable.required === true) problems.push(`${name}: required: ${variable.doc}`);
      values[name] = undefined;
      continue;
    }
    try {
      values[name] = variable.parse === undefined ? text : variable.parse(text);
    } catch (error) {
      if (variable.secret === true) problems.push(`${name}: ${withheld(reason(error), text)}`);
      else problems.push(`${name}: ${reason(error)}, got ${shown(text)}`);
    }
  }
  if (problems.length > 0) throw new PackError('PACK_CONFIG_INVALID', pack.name, problems);
  // Every name was read by its own variable, so each property has the type PackConfig<C> gives it.
  return values as PackConfig<C>;
}
