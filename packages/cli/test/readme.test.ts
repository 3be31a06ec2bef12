import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMMAND_GROUPS, runCli } from '@gatehouse/cli';

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

describe('the README', () => {
  it('shows an example of every subcommand', () => {
    for (const group of COMMAND_GROUPS) {
      for (const sub of group.subcommands)
        expect(README, `${group.name} ${sub.name}`).toMatch(new RegExp(`^gatehouse ${group.name} ${sub.name}\\b`, 'm'));
    }
  });

  it('documents every environment variable the help lists', async () => {
    let help = '';
    await runCli(['--help'], { stdout: { write: (t: string) => (help += t) }, stderr: { write: () => undefined }, env: {}, now: Date.now });
    const variables = [...help.matchAll(/^ {2}([A-Z][A-Z0-9_]+) /gm)].map((m) => m[1] ?? '');
    expect(variables.length).toBeGreaterThan(5);
    for (const variable of variables) expect(README, variable).toContain(`\`${variable}\``);
  });
});
