#!/usr/bin/env node
// `gatehouse-mcp`: the MCP front door. `--stdio` serves one run (GATEHOUSE_MCP_TOKEN) on stdin and
// stdout for a desktop client; without it, Streamable HTTP on MCP_HOST:MCP_PORT. Committed as a
// launcher so npm links it before the workspace is compiled.
import { existsSync } from 'node:fs';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('gatehouse-mcp: not built yet; run `npm install` (or `npm run build`) in the repository first\n');
  process.exit(2);
}
await import(main.href);
