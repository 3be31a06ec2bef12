// Label values are bounded here, once, so no call site can put an agent's input (a tool address it
// made up, an unknown field name, an id) into a label: every value is from a closed set or the catalog.
import { fieldLabel } from './field-label.js';

/** The value of every label whose real value is outside its closed set. */
export const OTHER = 'other';

/** A tool as the metrics need it: its address (`name.vN`) and its input schema. ToolContract fits. */
export interface ToolLike {
  readonly address: string;
  readonly input?: unknown;
}

export interface ToolLabels {
  readonly tool: string;
  readonly version: string;
}

const ADDRESS = /^([a-z][a-z0-9_]*)\.v([1-9][0-9]*)$/;
const CODE = /^[A-Z][A-Z0-9_]{0,63}$/;
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Labels of the tools of one catalog; anything else (a mistyped or invented address) is `other`. */
export class ToolLabelSet {
  readonly #labels = new Map<string, ToolLabels>();
  readonly #inputs = new Map<string, unknown>();
  static readonly #other: ToolLabels = { tool: OTHER, version: OTHER };

  constructor(tools: readonly ToolLike[]) {
    for (const tool of tools) {
      const match = ADDRESS.exec(tool.address);
      if (match?.[1] === undefined || match[2] === undefined) continue;
      this.#labels.set(tool.address, { tool: match[1], version: match[2] });
      this.#inputs.set(tool.address, tool.input);
    }
  }

  of(address: string): ToolLabels {
    return this.#labels.get(address) ?? ToolLabelSet.#other;
  }

  /** The bounded `field` of a failure at `pointer` in the arguments of `address` (`*` for an unknown tool). */
  field(address: string, pointer: string): string {
    if (!this.#labels.has(address)) return pointer === '' ? '' : '*';
    return fieldLabel(this.#inputs.get(address), pointer);
  }
}

/** An error code from the catalogue's shape (`UPPER_SNAKE`), else `other`. */
export function codeLabel(code: string): string {
  return CODE.test(code) ? code : OTHER;
}

/** `value` when it is one of `allowed`, else `other`. */
export function oneOf<T extends string>(allowed: readonly T[], value: string): T | typeof OTHER {
  return (allowed as readonly string[]).includes(value) ? (value as T) : OTHER;
}

export function methodLabel(method: string): string {
  return METHODS.has(method) ? method : OTHER;
}
