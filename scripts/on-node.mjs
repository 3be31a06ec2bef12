// node scripts/on-node.mjs <script> [args…]: runs <script> with [args…] on a supported Node — this
// one when it is, else the pinned Node 24 installed from the npm registry (scripts/supported-node.mjs).
// package.json's scripts start through it, so `npm run demo` and `npm test` work on any machine
// whose npm works, and the script sees its own path and arguments as if it had been started alone.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { onSupportedNode, quietKafkajs } from './supported-node.mjs';

await onSupportedNode();
// What this script starts inherits it (services, vitest, the stack's scripts).
process.env.NODE_OPTIONS = quietKafkajs(process.env);
const script = process.argv[2];
if (script === undefined) {
  process.stderr.write('usage: node scripts/on-node.mjs <script> [args…]\n');
  process.exit(2);
}
process.argv.splice(1, 2, resolve(script));
await import(pathToFileURL(resolve(script)).href);
