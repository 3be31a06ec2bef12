import { describe, expect, it } from 'vitest';
import { CliError, ExitCode, Output, runCli, usageError } from '@gatehouse/cli';
import type { CommandGroup } from '@gatehouse/cli';
import { captureIo } from './support.js';

const seen: Record<string, unknown>[] = [];

const echo: CommandGroup = {
  name: 'echo',
  summary: 'test commands',
  subcommands: [
    {
      name: 'say',
      summary: 'prints its argument',
      positionals: ['word'],
      options: {
        times: { type: 'string', value: 'n', required: true, description: 'how often' },
        tag: { type: 'string', multiple: true, description: 'tags' },
        loud: { type: 'boolean', description: 'upper case' },
      },
      run({ arg, options, out }) {
        const word = options.flag('loud') ? arg('word').toUpperCase() : arg('word');
        seen.push({ word, tags: options.list('tag') });
        out.result({ word, times: Number(options.required('times')) }, () => `${word.repeat(Number(options.required('times')))}\n`);
        return Promise.resolve();
      },
    },
    {
      name: 'refuse',
      summary: 'fails like a 409',
      run: () => Promise.reject(new CliError(ExitCode.refused, 'NOT_PENDING', 'already decided', { details: { status: 409 } })),
    },
    {
      name: 'down',
      summary: 'fails like a dead service',
      run: () => Promise.reject(new CliError(ExitCode.unreachable, 'UNREACHABLE', 'cannot reach it')),
    },
    { name: 'bug', summary: 'throws a plain error', run: () => Promise.reject(new Error('boom')) },
    { name: 'usage', summary: 'rejects its input', run: () => Promise.reject(usageError('bad input')) },
  ],
};

describe('runCli', () => {
  it('runs a subcommand with its positional, required, repeated and boolean options', async () => {
    const io = captureIo();
    expect(await runCli(['echo', 'say', 'ab', '--times', '2', '--tag', 'x', '--tag', 'y', '--loud'], io, [echo])).toBe(ExitCode.ok);
    expect(io.out()).toBe('ABAB\n');
    expect(seen.at(-1)).toEqual({ word: 'AB', tags: ['x', 'y'] });
  });

  it('prints the result as JSON with --json, before or after the command', async () => {
    for (const args of [
      ['--json', 'echo', 'say', 'a', '--times', '3'],
      ['echo', 'say', 'a', '--times', '3', '--json'],
    ]) {
      const io = captureIo();
      expect(await runCli(args, io, [echo])).toBe(ExitCode.ok);
      expect(JSON.parse(io.out())).toEqual({ word: 'a', times: 3 });
    }
  });

  it('exits 2 on an unknown command, subcommand or option, a missing or extra argument and a missing required option', async () => {
    const cases = [
      ['nope'],
      ['echo'],
      ['echo', 'shout'],
      ['echo', 'say', 'a', '--times', '1', '--bogus'],
      ['echo', 'say', '--times', '1'],
      ['echo', 'say', 'a', 'b', '--times', '1'],
      ['echo', 'say', 'a'],
      ['echo', 'usage'],
    ];
    for (const args of cases) {
      const io = captureIo();
      expect(await runCli(args, io, [echo]), args.join(' ')).toBe(ExitCode.usage);
      expect(io.err(), args.join(' ')).toContain('gatehouse: ');
      expect(io.out(), args.join(' ')).toBe('');
    }
  });

  it('exits with the code of the failure, 1 for an unexpected error, and reports it as JSON on stderr with --json', async () => {
    const refused = captureIo();
    expect(await runCli(['echo', 'refuse', '--json'], refused, [echo])).toBe(ExitCode.refused);
    expect(JSON.parse(refused.err())).toEqual({ error: { code: 'NOT_PENDING', message: 'already decided', exit_code: 1, status: 409 } });
    expect(await runCli(['echo', 'down'], captureIo(), [echo])).toBe(ExitCode.unreachable);
    const bug = captureIo();
    expect(await runCli(['echo', 'bug'], bug, [echo])).toBe(ExitCode.refused);
    expect(bug.err()).toBe('gatehouse: boom\n');
  });

  it('prints help on stdout with exit 0 for the whole tool, a command and a subcommand', async () => {
    for (const [args, expected] of [
      [['--help'], 'Usage: gatehouse <command>'],
      [['help', 'echo'], 'gatehouse echo say <word> --times <n> [--tag <value>]... [--loud] [--json]'],
      [['echo', '--help'], 'gatehouse echo — test commands'],
      [['echo', 'say', '-h'], 'Usage: gatehouse echo say <word> --times <n>'],
    ] as const) {
      const io = captureIo();
      expect(await runCli(args, io, [echo]), args.join(' ')).toBe(ExitCode.ok);
      expect(io.out(), args.join(' ')).toContain(expected);
    }
  });

  it('lists every command of the real tool, trace included', async () => {
    const help = captureIo();
    await runCli(['--help'], help);
    for (const group of ['runs', 'approvals', 'operations', 'dlq', 'catalog', 'trace']) expect(help.out()).toContain(`\n  ${group} `);
    const trace = captureIo();
    expect(await runCli(['trace', 'replay', '/nonexistent/trace.json'], trace)).toBe(ExitCode.usage);
    expect(trace.err()).toContain('cannot read /nonexistent/trace.json');
  });
});

describe('progress', () => {
  it('writes a line at most every second off a terminal, and always the last one', () => {
    let now = 0;
    const io = captureIo({ clock: () => now });
    const progress = new Output(io, false).progress('replaying');
    for (let done = 1; done <= 5; done += 1) {
      progress.update(done, 5);
      now += 400;
    }
    progress.finish('replayed 5');
    expect(io.err()).toBe('replaying: 1/5 (20%)\nreplaying: 4/5 (80%)\nreplaying: 5/5 (100%)\nreplayed 5\n');
    expect(io.out()).toBe('');
  });

  it('rewrites one line on a terminal and clears it at the end', () => {
    const io = captureIo({ tty: true });
    const progress = new Output(io, false).progress('reading');
    progress.update(1, 2);
    progress.update(2, 2);
    progress.finish();
    expect(io.err()).toBe('\rreading: 1/2 (50%)\u001b[K\rreading: 2/2 (100%)\u001b[K\r\u001b[K');
  });
});
