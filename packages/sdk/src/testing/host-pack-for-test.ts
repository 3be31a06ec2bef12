import { readFileSync } from 'node:fs';
import type { ToolImplementation } from '@gatehouse/contracts';
import { readPackConfig } from '../pack-config.js';
import type { ConfigSpec, Env, PackConfig } from '../pack-config.js';
import { isToolPack, toolsOf } from '../tool-pack.js';
import type { ToolPack } from '../tool-pack.js';
import { validatePack } from '../validate-pack.js';
import type { ValidatedPack } from '../validate-pack.js';

/** A pack set up and checked as a service hosts it, with what a test reaches for. */
export interface PackUnderTest<C extends ConfigSpec = ConfigSpec> extends ValidatedPack {
  /** The configuration `setup` was given, read from the test's `env`. */
  readonly config: PackConfig<C>;
  /** The implementation of `address` (e.g. `get_ticket.v1`); throws naming the addresses there are. */
  implementation(address: string): ToolImplementation;
}

function readDocument(url: URL, what: string): unknown {
  try {
    return JSON.parse(readFileSync(url, 'utf8')) as unknown;
  } catch (error) {
    throw new Error(`the pack's ${what} ${url.href} cannot be read: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
}

/**
 * Hosts `pack` the way every Gatehouse service does, without Kafka or Redis: its configuration read
 * from `env` (never `process.env`) and handed to `setup` once, its tools built, and its catalog,
 * roles and policy table checked by `validatePack`. Throws a `PackError` naming every problem, as
 * the services refuse to start. The services also accept files that replace the pack's roles and
 * policy table (`GATEHOUSE_ROLES_FILE`, …); a test of the pack checks the pack's own.
 */
export async function hostPackForTest<C extends ConfigSpec, D>(pack: ToolPack<C, D>, env: Env = {}): Promise<PackUnderTest<C>> {
  if (!isToolPack(pack))
    throw new TypeError(
      `hostPackForTest was given ${pack === undefined ? 'undefined' : typeof pack}, not a tool pack made with defineToolPack: check the name imported from the pack's module`,
    );
  const config = readPackConfig(pack, env);
  const tools = toolsOf(pack, await pack.setup(config));
  const validated = validatePack(pack, {
    tools,
    roles: readDocument(pack.roles, 'roles file'),
    policyTable: readDocument(pack.policyTable, 'policy table'),
  });
  const byAddress = new Map<string, ToolImplementation>(
    validated.implementations.map((implementation) => [implementation.contract.address, implementation]),
  );
  return {
    ...validated,
    config,
    implementation(address) {
      const found = byAddress.get(address);
      if (found === undefined) throw new Error(`${pack.name} has no tool ${address}; it has ${[...byAddress.keys()].sort().join(', ')}`);
      return found;
    },
  };
}
