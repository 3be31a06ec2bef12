// node scripts/pack-package.mjs <package dir> [--out <dir>]: the package as one tarball that installs
// outside this workspace. The workspace packages it depends on (@gatehouse/*, transitively) travel
// inside it as bundled dependencies, built; their registry dependencies become its own, so npm
// installs them beside it. Prints the tarball's path. Run after `npm run build`.
//
//   npm run pack:sdk      → packed/gatehouse-sdk-<version>.tgz
//   npm run pack:client   → packed/gatehouse-client-<version>.tgz
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SCOPE = '@gatehouse/';
/** What a packed manifest keeps of the workspace's; the rest (scripts, devDependencies, private) stays home. */
const KEPT_FIELDS = ['name', 'version', 'description', 'type', 'exports', 'types', 'main', 'bin', 'engines', 'license', 'keywords'];

const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));

/**
 * What a package reads from the repository rather than from its own folder, copied into it when
 * packed (an entry of its `files` → the path from the root): the wire contract lives in the top-level
 * `schemas/`, and a packed @gatehouse/events carries its own copy.
 */
const FROM_ROOT = { '@gatehouse/events': { schemas: 'schemas' } };

/** Every workspace package by name: its folder and manifest. */
function workspacePackages() {
  const byName = new Map();
  for (const group of ['packages', 'services']) {
    for (const entry of readdirSync(join(ROOT, group), { withFileTypes: true })) {
      const manifestFile = join(ROOT, group, entry.name, 'package.json');
      if (!entry.isDirectory() || !existsSync(manifestFile)) continue;
      const manifest = readJson(manifestFile);
      byName.set(manifest.name, { dir: join(ROOT, group, entry.name), manifest });
    }
  }
  return byName;
}

/** The @gatehouse packages `manifest` needs at run time, transitively, in a stable order. */
function bundledClosure(manifest, byName) {
  const seen = new Set();
  const visit = (deps) => {
    for (const name of Object.keys(deps ?? {})
      .filter((dep) => dep.startsWith(SCOPE))
      .sort()) {
      if (seen.has(name)) continue;
      const found = byName.get(name);
      if (found === undefined) throw new Error(`${name} is not a workspace package`);
      if (found.dir.startsWith(join(ROOT, 'services')))
        throw new Error(`${manifest.name} depends on the service ${name}; a package never does`);
      seen.add(name);
      visit(found.manifest.dependencies);
    }
  };
  visit(manifest.dependencies);
  return [...seen];
}

/** The registry dependencies of the package and everything it bundles; one version per name, or a refusal. */
function registryDependencies(manifests) {
  const merged = {};
  for (const manifest of manifests) {
    for (const [name, version] of Object.entries(manifest.dependencies ?? {})) {
      if (name.startsWith(SCOPE)) continue;
      if (merged[name] !== undefined && merged[name] !== version) {
        throw new Error(`${name} is pinned to both ${merged[name]} and ${version}; one version must serve the packed package`);
      }
      merged[name] = version;
    }
  }
  return Object.fromEntries(Object.entries(merged).sort(([a], [b]) => a.localeCompare(b)));
}

/** Copies a package's published files (its `files`, package.json, README, CHANGELOG) into `to`. */
function copyPublished(dir, manifest, to) {
  mkdirSync(to, { recursive: true });
  for (const entry of [...(manifest.files ?? []), 'README.md', 'CHANGELOG.md']) {
    const fromRoot = FROM_ROOT[manifest.name]?.[entry];
    const from = fromRoot === undefined ? join(dir, entry) : join(ROOT, fromRoot);
    // Source maps point into src/, which is not shipped.
    if (existsSync(from)) cpSync(from, join(to, entry), { recursive: true, filter: (file) => !file.endsWith('.map') });
    else if ((manifest.files ?? []).includes(entry)) throw new Error(`${manifest.name}: ${entry} is missing; run npm run build first`);
  }
}

const pick = (manifest) =>
  Object.fromEntries(KEPT_FIELDS.filter((field) => manifest[field] !== undefined).map((field) => [field, manifest[field]]));

function packPackage(packageDir, outDir) {
  const byName = workspacePackages();
  const manifest = readJson(join(packageDir, 'package.json'));
  const bundled = bundledClosure(manifest, byName);
  const stage = mkdtempSync(join(tmpdir(), 'gatehouse-pack-'));
  try {
    copyPublished(packageDir, manifest, stage);
    for (const name of bundled) {
      const { dir, manifest: inner } = byName.get(name);
      const to = join(stage, 'node_modules', name);
      copyPublished(dir, inner, to);
      writeFileSync(join(to, 'package.json'), `${JSON.stringify({ ...pick(inner), dependencies: inner.dependencies ?? {} }, null, 2)}\n`);
    }
    const packed = {
      ...pick(manifest),
      files: manifest.files,
      dependencies: {
        ...registryDependencies([manifest, ...bundled.map((name) => byName.get(name).manifest)]),
        ...Object.fromEntries(bundled.map((name) => [name, byName.get(name).manifest.version])),
      },
      bundleDependencies: bundled,
    };
    writeFileSync(join(stage, 'package.json'), `${JSON.stringify(packed, null, 2)}\n`);
    mkdirSync(outDir, { recursive: true });
    const out = execFileSync('npm', ['pack', '--json', '--pack-destination', outDir], {
      cwd: stage,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const [{ filename }] = JSON.parse(out);
    return join(outDir, filename);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

const { positionals, values } = parseArgs({ allowPositionals: true, options: { out: { type: 'string', default: join(ROOT, 'packed') } } });
if (positionals.length !== 1) {
  process.stderr.write('usage: node scripts/pack-package.mjs <package dir> [--out <dir>]\n');
  process.exit(2);
}
process.stdout.write(`${packPackage(resolve(positionals[0]), resolve(values.out))}\n`);
