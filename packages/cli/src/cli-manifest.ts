import { readFileSync } from 'node:fs';

/** What the CLI's own package.json says: its version, and the versions of the packages it is built against. */
export interface CliManifest {
  readonly version: string;
  readonly dependencies: Readonly<Record<string, string>>;
}

export function cliManifest(): CliManifest {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version?: string;
    dependencies?: Record<string, string>;
  };
  return { version: manifest.version ?? 'unknown', dependencies: manifest.dependencies ?? {} };
}
