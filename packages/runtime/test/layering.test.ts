import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The lint rule checks imports once dist/ is built; this checks what each workspace declares, so a
// dependency that points up is refused even before anything is compiled.
const root = new URL('../../../', import.meta.url);

interface Workspace {
  readonly dir: string;
  readonly layer: 'package' | 'service' | 'example';
  readonly name: string;
  readonly dependencies: readonly string[];
}

function workspaces(): Workspace[] {
  const found: Workspace[] = [];
  const add = (dir: string, layer: Workspace['layer']): void => {
    const manifest = new URL(`${dir}/package.json`, root);
    if (!existsSync(manifest)) return;
    const parsed = JSON.parse(readFileSync(manifest, 'utf8')) as { name: string; dependencies?: Record<string, string> };
    found.push({ dir, layer, name: parsed.name, dependencies: Object.keys(parsed.dependencies ?? {}) });
  };
  const dirs = (path: string): string[] =>
    readdirSync(new URL(path, root), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  for (const name of dirs('packages/')) add(`packages/${name}`, 'package');
  for (const name of dirs('services/')) add(`services/${name}`, 'service');
  for (const domain of dirs('examples/')) for (const name of dirs(`examples/${domain}/`)) add(`examples/${domain}/${name}`, 'example');
  return found;
}

describe('the layering of the workspace', () => {
  const all = workspaces();
  const layerOf = new Map(all.map((w) => [w.name, w.layer]));

  it('finds the packages, the services and the examples', () => {
    expect(all.filter((w) => w.layer === 'package').length).toBeGreaterThan(8);
    expect(
      all
        .filter((w) => w.layer === 'service')
        .map((w) => w.dir)
        .sort(),
    ).toEqual(['services/approval', 'services/executor', 'services/mcp', 'services/policy']);
    expect(all.filter((w) => w.layer === 'example').length).toBeGreaterThanOrEqual(4);
  });

  it('lets no package depend on a service or an example, and no service on another service or an example', () => {
    const upward = all.flatMap((w) =>
      w.layer === 'example'
        ? []
        : w.dependencies
            .filter((d) => layerOf.get(d) === 'example' || (layerOf.get(d) === 'service' && d !== w.name))
            .map((d) => `${w.dir} → ${d}`),
    );
    expect(upward).toEqual([]);
  });

  it('lets a tool pack depend on the sdk, never on the core packages behind it or a service', () => {
    const packs = all.filter((w) => w.layer === 'example' && w.dir.endsWith('/pack'));
    expect(packs.length).toBeGreaterThanOrEqual(2);
    for (const pack of packs)
      expect(
        pack.dependencies.filter((d) => layerOf.has(d)),
        pack.dir,
      ).toEqual(['@gatehouse/sdk']);
  });
});
