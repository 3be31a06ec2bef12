// `npm run soak -- --minutes 30 [--rate 200] [--fault-every 4]`: builds, brings the local stack up
// if it is not running, and runs the soak (test/soak/soak.test.ts) on the stack's Kafka cluster and
// replicated Redis: a paced mixed load with a fault every few minutes, then the nothing-lost and
// nothing-twice audit. Its report goes to test-artifacts/soak/ and to the terminal. Not part of
// `npm test`.
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { requirePrerequisites } from './prerequisites.mjs';
import { build, stackDown, stackUp } from './stack-lifecycle.mjs';

const root = new URL('..', import.meta.url).pathname;
const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    rate: { type: 'string', default: '200' },
    'fault-every': { type: 'string', default: '4' },
  },
});
for (const [name, value] of Object.entries(values)) {
  if (!(Number(value) > 0)) {
    process.stderr.write(`--${name} must be a positive number (got ${value})\n`);
    process.exit(2);
  }
}

await requirePrerequisites({ faketime: true });
build();
const started = stackUp();
let status = 1;
try {
  const run = spawnSync(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', '--project', 'soak'], {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      GATEHOUSE_SOAK_MINUTES: values.minutes,
      GATEHOUSE_SOAK_RATE: values.rate,
      GATEHOUSE_SOAK_FAULT_EVERY_MINUTES: values['fault-every'],
      // The load keeps every call and every result for the audit: hundreds of thousands of each.
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=8192`.trim(),
    },
  });
  status = run.status ?? 1;
} finally {
  stackDown(started);
}
process.exit(status);
