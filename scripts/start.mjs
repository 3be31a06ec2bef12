// `npm start`: the local stack plus every Gatehouse service, in the foreground, one line per
// service; Ctrl-C stops what this command started.
import { startServices } from './services.mjs';
import { build, stackDown, stackUp } from './stack-lifecycle.mjs';

const say = (line) => process.stdout.write(`${line}\n`);
const env = {
  GATEHOUSE_CONTROL_TOKEN: process.env.GATEHOUSE_CONTROL_TOKEN ?? 'local-dev-control-token-change-me',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
};

say('Gatehouse — starting the local stack and services (Ctrl-C stops what this started)');
const started = stackUp();
let services;
const shutdown = async () => {
  say('\nstopping…');
  await services?.stop();
  stackDown(started);
  process.exit(0);
};
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());

try {
  build();
  services = await startServices({
    names: ['customers', 'policy', 'approval', 'executor-1', 'executor-2'],
    env,
    say,
  });
} catch (error) {
  say(`✖ ${error.message}`);
  stackDown(started);
  process.exit(1);
}
say('');
say('approval console   http://127.0.0.1:8093/   (demo approver tokens: services/approval/README.md)');
say('control API        http://127.0.0.1:8091/   (bearer GATEHOUSE_CONTROL_TOKEN)');
say('logs               .stack/logs/<service>.log');
for (const child of services.children) {
  child.once('exit', (code, signal) => {
    say(`a service exited (${code ?? signal}); stopping`);
    void shutdown();
  });
}
