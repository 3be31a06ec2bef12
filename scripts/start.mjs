// `npm start`: the local stack plus every Gatehouse service, in the foreground, one line per
// service. A service that dies is restarted (with a growing pause); Ctrl-C stops what this command
// started, in order: the services that take work, then the system of record they call, then the stack.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { requirePrerequisites } from './prerequisites.mjs';
import { build, stackDown, stackUp } from './stack-lifecycle.mjs';
import { writePublicKeys } from './services.mjs';
import { createSupervisor } from './supervisor.mjs';

const say = (line) => process.stdout.write(`${line}\n`);
process.stdout.on('error', () => {}); // a closed terminal must not stop the shutdown
/**
 * The control API's local token: yours when you set one, else a fresh one each start, written for
 * this user only to .stack/control-token.env. A token printed in the docs would let any process on
 * the machine register runs.
 */
function controlToken() {
  if (process.env.GATEHOUSE_CONTROL_TOKEN !== undefined) return process.env.GATEHOUSE_CONTROL_TOKEN;
  const token = `local-${randomBytes(24).toString('base64url')}`;
  const dir = join(import.meta.dirname, '..', '.stack');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'control-token.env'), `GATEHOUSE_CONTROL_TOKEN=${token}\n`, { mode: 0o600 });
  return token;
}
const env = {
  GATEHOUSE_CONTROL_TOKEN: controlToken(),
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
};
/** Shutdown order: callers first (they finish in-flight work on SIGTERM), then what they call. */
const STAGES = [
  { label: 'front doors and consumers', names: ['mcp', 'policy', 'approval', 'executor-1', 'executor-2'] },
  { label: 'systems of record', names: ['customers'] },
];
const GRACE_MS = 20_000;

say('Gatehouse — starting the local stack and services (Ctrl-C stops what this started)');
await requirePrerequisites();
build(); // a fresh clone, or edited sources: compile (incrementally) before any service starts
const started = stackUp();
const services = createSupervisor({
  names: ['customers', 'policy', 'approval', 'executor-1', 'executor-2', 'mcp'],
  env,
  say,
  graceMs: GRACE_MS,
});
let stopping = false;
let stoppingSince = 0;
/** A second stop signal this soon is the same Ctrl-C by another path, not a second press. */
const SAME_PRESS_MS = 1_000;
const shutdown = async () => {
  if (stopping) {
    // A terminal sends Ctrl-C to every process of its group, and npm and the launcher on an older
    // Node (scripts/supported-node.mjs) pass it on as well: one press arrives here more than once.
    if (Date.now() - stoppingSince < SAME_PRESS_MS) return;
    say('\nCtrl-C again: killing every service now (SIGKILL)');
    services.kill();
    return;
  }
  stopping = true;
  stoppingSince = Date.now();
  say(`\nstopping… (each service gets ${GRACE_MS / 1000}s to finish its work; Ctrl-C again kills them all now)`);
  const begun = Date.now();
  await services.stop(STAGES);
  say(
    started.length === 0
      ? 'stopping the local stack: nothing to stop (it was already running)'
      : `stopping the local stack: ${started.join(', ')}`,
  );
  stackDown(started);
  say(`stopped in ${((Date.now() - begun) / 1000).toFixed(1)}s`);
  process.exit(0);
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => void shutdown());
process.on('exit', () => services.kill()); // the services run in their own process groups: never leave them behind

let up = false;
try {
  await services.start();
  writePublicKeys();
  up = true;
} catch (error) {
  // After a Ctrl-C during start-up, shutdown() is already stopping everything and exits.
  if (!stopping) {
    say(`✖ ${error.message}`);
    stackDown(started);
    process.exit(1);
  }
}
if (up && !stopping) {
  say('');
  say(
    "approval console   http://127.0.0.1:8093/   (sign in at the local Keycloak as lead@acme.example / lead-local-only; the realm's people are in docs/identity.md)",
  );
  say(
    `control API        http://127.0.0.1:8091/   (bearer GATEHOUSE_CONTROL_TOKEN${process.env.GATEHOUSE_CONTROL_TOKEN === undefined ? ': this start made one, `set -a; . .stack/control-token.env; set +a`' : ''})`,
  );
  say("MCP front door     http://127.0.0.1:8095/mcp (bearer: a run's token, `gatehouse runs create --mcp-token`; docs/mcp.md)");
  say('logs               .stack/logs/<service>.log');
  say('public keys        .stack/public-keys.env   (what an agent client, a subscriber or `gatehouse trace record` checks answers with)');
}
