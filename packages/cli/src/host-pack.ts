import type { HostedPack } from '@gatehouse/runtime';
import type { ToolPack } from '@gatehouse/sdk';
import { CliError, ExitCode } from './exit-code.js';
import type { Env } from './io.js';
import { pathHint } from './pack-choice.js';
import type { DocumentOverrides } from './pack-choice.js';
import { documentsInForce, packFailure } from './pack-failure.js';
import type { PackFailure } from './pack-failure.js';

function refused(failure: PackFailure, cause: unknown): CliError {
  return new CliError(ExitCode.refused, failure.code, failure.message, {
    cause,
    details: { problems: failure.problems.map((p) => p.text) },
  });
}

/** Imports the pack a specifier names (a package name or a path against the working directory); a failure exits 1. */
async function loadPack(specifier: string): Promise<ToolPack> {
  // Loaded on demand: the runtime (and the pack it imports) is the slow part of start-up.
  const { loadToolPack } = await import('@gatehouse/runtime');
  try {
    return await loadToolPack(specifier, process.cwd());
  } catch (cause) {
    throw refused(packFailure(cause, undefined, pathHint(specifier)), cause);
  }
}

/**
 * Hosts a pack as every service hosts it (`hostToolPack`): its configuration read from `env`, its
 * tools set up, its catalog linted and compiled, its roles and policy table — the overrides, else
 * its own — checked against the catalog. A failure exits 1 naming every problem.
 */
async function hostPack(pack: ToolPack, env: Env, overrides: DocumentOverrides): Promise<HostedPack> {
  const { hostToolPack } = await import('@gatehouse/runtime');
  try {
    return await hostToolPack(pack, env, overrides);
  } catch (cause) {
    throw refused(packFailure(cause, documentsInForce(pack, overrides)), cause);
  }
}

/** `loadPack` then `hostPack`: what the catalog and trace commands work on. */
export async function hostedPack(specifier: string, env: Env, overrides: DocumentOverrides): Promise<HostedPack> {
  return hostPack(await loadPack(specifier), env, overrides);
}
