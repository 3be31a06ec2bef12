import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CliIo } from '@gatehouse/cli';

export interface CapturedIo extends CliIo {
  readonly out: () => string;
  readonly err: () => string;
}

/** An io that records what a command writes; `now` is fixed unless a clock is given. */
export function captureIo(options: { env?: Record<string, string>; tty?: boolean; clock?: () => number } = {}): CapturedIo {
  let out = '';
  let err = '';
  return {
    stdout: { write: (text: string) => (out += text) },
    stderr: { write: (text: string) => (err += text), isTTY: options.tty ?? false },
    env: options.env ?? {},
    now: options.clock ?? (() => 1_700_000_000_000),
    out: () => out,
    err: () => err,
  };
}

/**
 * A fresh directory under packages/cli/test, removed by `remove()`. A pack scaffolded here resolves
 * @gatehouse/sdk through the workspace's node_modules, as it would not from the system's temp dir.
 */
export function repositoryTempDir(): { readonly dir: string; readonly remove: () => void } {
  const dir = join(fileURLToPath(new URL('.', import.meta.url)), `.tmp-${randomBytes(6).toString('hex')}`);
  mkdirSync(dir);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
