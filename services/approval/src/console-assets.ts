import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The console's three files, read once at start-up and served as strings. */
export interface ConsoleAssets {
  readonly html: string;
  readonly script: string;
  readonly style: string;
}

export const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL('../console/', import.meta.url));

export function loadConsoleAssets(dir: string = DEFAULT_CONSOLE_DIR): ConsoleAssets {
  const read = (name: string): string => readFileSync(`${dir.replace(/\/?$/, '/')}${name}`, 'utf8');
  return { html: read('index.html'), script: read('console.js'), style: read('console.css') };
}
