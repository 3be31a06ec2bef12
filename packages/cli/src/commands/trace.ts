import type { CommandGroup, Subcommand } from '../command.js';
import { CliError, ExitCode } from '../exit-code.js';

// Not built yet. Whoever builds it replaces this file only: commands.ts already lists `trace`.
const notYet = (name: string, summary: string): Subcommand => ({
  name,
  summary: `${summary} (not available yet)`,
  anyArguments: true,
  run() {
    return Promise.reject(new CliError(ExitCode.usage, 'NOT_AVAILABLE', `gatehouse trace ${name} is not available yet`));
  },
});

export const trace: CommandGroup = {
  name: 'trace',
  summary: 'record a redacted trace of a run and replay it after a schema change (not available yet)',
  subcommands: [notYet('record', 'record a redacted trace of a run'), notYet('replay', 'replay a recorded trace against the current catalog')],
};
