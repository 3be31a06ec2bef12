#!/usr/bin/env node
// The `gatehouse` command. npm links a workspace's bin when it installs, before the root `prepare`
// script has compiled anything, and it skips a bin whose file does not exist yet: this launcher is
// committed so the link is always made, and it runs the compiled CLI.
import { existsSync } from 'node:fs';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('gatehouse: the CLI is not built yet; run `npm install` (or `npm run build`) in the repository first\n');
  process.exit(2);
}
await import(main.href);
