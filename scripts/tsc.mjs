// Runs the native TypeScript 7 compiler. The `typescript` package in devDependencies stays on 6.0
// because typescript-eslint loads the compiler's JS API, which TypeScript 7 does not ship.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const tsc = join(dirname(require.resolve('typescript-7/package.json')), 'bin', 'tsc');
const run = spawnSync(process.execPath, [tsc, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(run.status ?? 1);
