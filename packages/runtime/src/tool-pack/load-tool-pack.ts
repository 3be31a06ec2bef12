import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isToolPack } from '@gatehouse/sdk';
import type { ToolPack } from '@gatehouse/sdk';
import { ToolPackLoadError } from './tool-pack-load-error.js';

const isPath = (specifier: string): boolean => specifier.startsWith('.') || isAbsolute(specifier);

/** The module a path names: a file, or a package directory's `exports['.']` (import) or `main`. */
function moduleUrlOfPath(path: string): string {
  if (!existsSync(path)) throw new ToolPackLoadError(`${path} does not exist`);
  if (!statSync(path).isDirectory()) return pathToFileURL(path).href;
  const manifest = join(path, 'package.json');
  if (!existsSync(manifest)) throw new ToolPackLoadError(`${path} is a directory without a package.json`);
  const parsed = JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: unknown; main?: unknown };
  const root =
    typeof parsed.exports === 'object' && parsed.exports !== null && '.' in parsed.exports ? parsed.exports['.'] : parsed.exports;
  const entry =
    typeof root === 'string'
      ? root
      : typeof root === 'object' && root !== null && 'import' in root && typeof root.import === 'string'
        ? root.import
        : typeof root === 'object' && root !== null && 'default' in root && typeof root.default === 'string'
          ? root.default
          : typeof parsed.main === 'string'
            ? parsed.main
            : 'index.js';
  const file = join(path, entry);
  if (!existsSync(file)) throw new ToolPackLoadError(`${file} (the entry of ${manifest}) does not exist; is the pack built?`);
  return pathToFileURL(file).href;
}

/**
 * Loads the tool pack `GATEHOUSE_TOOL_PACK` names: a package name (`@acme/billing-tools`) resolved
 * like any import, or a path (`./packs/billing`, `/opt/packs/billing/dist/index.js`) resolved
 * against `cwd`, a package directory or a module file. The module must export exactly one tool pack
 * (made with `defineToolPack`), or name the export: `@acme/tools#billingPack`.
 */
export async function loadToolPack(specifier: string, cwd = process.cwd()): Promise<ToolPack> {
  const [target = '', exportName] = specifier.split('#', 2);
  if (target === '') throw new ToolPackLoadError('no tool pack named: set GATEHOUSE_TOOL_PACK to a package name or a path');
  const url = isPath(target) ? moduleUrlOfPath(resolve(cwd, target)) : target;
  let module: Record<string, unknown>;
  try {
    module = (await import(url)) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof ToolPackLoadError) throw error;
    throw new ToolPackLoadError(`${target} could not be imported: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  const packs = Object.entries(module).filter((entry): entry is [string, ToolPack] => isToolPack(entry[1]));
  if (exportName !== undefined) {
    const chosen = module[exportName];
    if (!isToolPack(chosen))
      throw new ToolPackLoadError(
        `${target} has no tool pack exported as ${exportName}${packs.length > 0 ? ` (it exports ${packs.map(([name]) => name).join(', ')})` : ''}`,
      );
    return chosen;
  }
  const [only, ...others] = packs;
  if (only === undefined) throw new ToolPackLoadError(`${target} exports no tool pack (made with defineToolPack from @gatehouse/sdk)`);
  if (others.length > 0)
    throw new ToolPackLoadError(
      `${target} exports ${packs.length} tool packs (${packs.map(([name]) => name).join(', ')}); name one: ${target}#${only[0]}`,
    );
  return only[1];
}
