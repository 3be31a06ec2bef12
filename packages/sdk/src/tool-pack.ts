import type { CallCredential, ToolImplementation } from '@gatehouse/contracts';
import type { ConfigSpec, PackConfig } from './pack-config.js';

/** The mark `defineToolPack` puts on a pack, so a loader can tell a pack from any other export. */
export const TOOL_PACK_KIND = 'gatehouse.tool-pack';

/** What a pack author writes. */
export interface ToolPackSpec<C extends ConfigSpec, D> {
  /** Lower-case words joined by `-`: `customer-support`. Names the pack in logs and errors. */
  readonly name: string;
  /**
   * The pack's own environment variables (name → doc, default, required, parse). Read once at
   * start-up and handed to `setup`, typed; handlers never read `process.env`.
   */
  readonly config: C;
  /** `file:` URL of the roles document (the format of config/roles.json). */
  readonly roles: URL;
  /** `file:` URL of the policy table (the format of config/policy-table.json). */
  readonly policyTable: URL;
  /** `file:` URL of the approval service's demo approvers (bearer-token hashes), used only behind its demo switch. */
  readonly approvers?: URL;
  /**
   * `file:` URL of the approver policy: which identity-provider claims (groups, roles, tenant) make
   * a person an approver of which roles and tenants (the format of config/approver-policy.json).
   */
  readonly approverPolicy?: URL;
  /** Builds what the handlers need (HTTP clients, pools) from the configuration, once. May be async. */
  setup(config: PackConfig<C>): D | Promise<D>;
  /** The pack's tools, bound to what `setup` built. Binds handlers only: no I/O here. */
  tools(deps: D): readonly ToolImplementation[];
  /**
   * How the pack's tools prove themselves to their system of record, for every tool that does not
   * declare a `credential` of its own: usually the audience of the one service the pack fronts.
   */
  credential?(deps: D): CallCredential;
}

/**
 * A tool pack: the unit a Gatehouse service hosts. Checked structurally (`isToolPack`), since a pack
 * loaded from its own path may bring its own copy of this package.
 */
export interface ToolPack<C extends ConfigSpec = ConfigSpec, D = unknown> extends ToolPackSpec<C, D> {
  readonly kind: typeof TOOL_PACK_KIND;
}

/**
 * Declares a tool pack. Nothing is checked here: `describePack` checks the shape and
 * `validatePack` the tools, roles and policy table, each listing every problem at once.
 */
export function defineToolPack<const C extends ConfigSpec, D>(spec: ToolPackSpec<C, D>): ToolPack<C, D> {
  return Object.freeze({ ...spec, kind: TOOL_PACK_KIND });
}

/** Whether `value` has the shape of a tool pack (a loader's first check on a module's export). */
export function isToolPack(value: unknown): value is ToolPack {
  return (
    typeof value === 'object' &&
    value !== null &&
    'kind' in value &&
    value.kind === TOOL_PACK_KIND &&
    'name' in value &&
    typeof value.name === 'string' &&
    'config' in value &&
    typeof value.config === 'object' &&
    value.config !== null &&
    'roles' in value &&
    value.roles instanceof URL &&
    'policyTable' in value &&
    value.policyTable instanceof URL &&
    'setup' in value &&
    typeof value.setup === 'function' &&
    'tools' in value &&
    typeof value.tools === 'function'
  );
}

/**
 * The pack's tools with its own `credential` given to each tool that declares none: what a service
 * hosts. Tools keep their own declaration.
 */
export function toolsOf<D>(pack: ToolPack<ConfigSpec, D>, deps: D): readonly ToolImplementation[] {
  const tools = pack.tools(deps);
  const credential = typeof pack.credential === 'function' ? pack.credential(deps) : undefined;
  // A pack written in JavaScript may return anything: validatePack names that, not this.
  if (credential === undefined || !Array.isArray(tools)) return tools;
  return (tools as readonly ToolImplementation[]).map((tool) => (tool.credential === undefined ? { ...tool, credential } : tool));
}
