import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { cliManifest } from './cli-manifest.js';
import type { CommandContext, CommandGroup, OptionSpecs, Options, Subcommand } from './command.js';
import { COMMAND_GROUPS } from './commands.js';
import { CliError, ExitCode, usageError } from './exit-code.js';
import { GLOBAL_OPTIONS, groupHelp, subcommandHelp, topHelp } from './help.js';
import { processIo } from './io.js';
import type { CliIo } from './io.js';
import { Output } from './output.js';

type Values = Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;

const LEADING_FLAGS: ReadonlySet<string> = new Set(['--json', '--help', '-h', '--version']);

function optionsOf(values: Values, specs: OptionSpecs): Options {
  const string = (name: string): string | undefined => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  return {
    string,
    required(name) {
      const value = string(name);
      if (value === undefined || value.trim() === '') throw usageError(`--${name} is required`);
      return value;
    },
    flag: (name) => values[name] === true,
    list(name) {
      const value = values[name];
      if (specs[name]?.multiple !== true) throw new Error(`option --${name} is not declared repeatable`);
      return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
    },
  };
}

function parse(sub: Subcommand, args: readonly string[]): { values: Values; positionals: string[] } {
  const specs: OptionSpecs = { ...(sub.options ?? {}), ...GLOBAL_OPTIONS };
  const options: NonNullable<ParseArgsConfig['options']> = Object.fromEntries(
    Object.entries(specs).map(([name, spec]) => [
      name,
      {
        type: spec.type,
        ...(spec.short === undefined ? {} : { short: spec.short }),
        ...(spec.multiple === undefined ? {} : { multiple: spec.multiple }),
      },
    ]),
  );
  try {
    const { values, positionals } = parseArgs({ args: [...args], options, allowPositionals: true, strict: sub.anyArguments !== true });
    return { values, positionals };
  } catch (error) {
    // util.parseArgs throws TypeErrors coded ERR_PARSE_ARGS_*: unknown option, missing value…
    throw usageError(error instanceof Error ? error.message : String(error));
  }
}

function find<T extends { readonly name: string }>(items: readonly T[], name: string, what: string): T {
  const found = items.find((item) => item.name === name);
  if (found === undefined) throw usageError(`unknown ${what} "${name}"; one of: ${items.map((i) => i.name).join(', ')}`);
  return found;
}

async function dispatch(argv: readonly string[], io: CliIo, groups: readonly CommandGroup[]): Promise<ExitCode> {
  let rest = [...argv];
  const leading = new Set<string>();
  while (rest[0] !== undefined && LEADING_FLAGS.has(rest[0])) leading.add(rest.shift() ?? '');
  if (rest[0] === 'help') {
    rest = rest.slice(1);
    leading.add('--help');
  }
  const wantsHelp = leading.has('--help') || leading.has('-h');
  const [groupName, subName] = rest;
  if (groupName === undefined) {
    if (leading.has('--version')) {
      io.stdout.write(`${cliManifest().version}\n`);
      return ExitCode.ok;
    }
    (wantsHelp ? io.stdout : io.stderr).write(topHelp(groups));
    return wantsHelp ? ExitCode.ok : ExitCode.usage;
  }
  const group = find(groups, groupName, 'command');
  if (subName === undefined || subName.startsWith('-')) {
    const helpAsked = wantsHelp || rest.slice(1).some((arg) => arg === '--help' || arg === '-h');
    if (helpAsked) {
      io.stdout.write(groupHelp(group));
      return ExitCode.ok;
    }
    io.stderr.write(groupHelp(group));
    throw usageError(`${group.name} needs a subcommand: ${group.subcommands.map((s) => s.name).join(', ')}`);
  }
  const sub = find(group.subcommands, subName, `${group.name} subcommand`);
  const { values, positionals } = parse(sub, rest.slice(2));
  if (wantsHelp || values['help'] === true) {
    io.stdout.write(subcommandHelp(group, sub));
    return ExitCode.ok;
  }
  const names = sub.positionals ?? [];
  if (sub.anyArguments !== true) {
    if (positionals.length < names.length)
      throw usageError(`missing <${names[positionals.length] ?? ''}>; usage: see gatehouse ${group.name} ${sub.name} --help`);
    if (positionals.length > names.length) throw usageError(`unexpected argument "${positionals[names.length] ?? ''}"`);
  }
  const json = leading.has('--json') || values['json'] === true;
  const context: CommandContext = {
    io,
    json,
    arg: (name) => {
      const index = names.indexOf(name);
      const value = positionals[index];
      if (index < 0 || value === undefined) throw new Error(`no positional <${name}> declared`);
      return value;
    },
    options: optionsOf(values, { ...(sub.options ?? {}), ...GLOBAL_OPTIONS }),
    out: new Output(io, json),
  };
  await sub.run(context);
  return ExitCode.ok;
}

function report(error: CliError, io: CliIo, json: boolean): void {
  if (json) {
    io.stderr.write(
      `${JSON.stringify({ error: { code: error.code, message: error.message, exit_code: error.exitCode, ...error.details } })}\n`,
    );
    return;
  }
  const hint =
    error.exitCode === ExitCode.usage && error.code === 'USAGE'
      ? '\n(gatehouse --help lists the commands; gatehouse <command> <subcommand> --help explains one)'
      : '';
  io.stderr.write(`gatehouse: ${error.message}${hint}\n`);
}

/**
 * Runs one command line and answers its exit code; never throws. Results go to stdout (tables, or
 * JSON with --json), errors and progress to stderr.
 */
export async function runCli(
  argv: readonly string[],
  io: CliIo = processIo(),
  groups: readonly CommandGroup[] = COMMAND_GROUPS,
): Promise<ExitCode> {
  try {
    return await dispatch(argv, io, groups);
  } catch (error) {
    const failure =
      error instanceof CliError
        ? error
        : new CliError(ExitCode.refused, 'FAILED', error instanceof Error ? error.message : String(error), { cause: error });
    report(failure, io, argv.includes('--json'));
    return failure.exitCode;
  }
}
