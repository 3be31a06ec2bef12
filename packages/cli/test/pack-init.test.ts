import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ExitCode, runCli } from '@gatehouse/cli';
import { schemaDirFor } from '../src/pack-scaffold.js';
import { captureIo, repositoryTempDir } from './support.js';

const FILES = [
  'package.json',
  'README.md',
  'config/roles.json',
  'config/policy-table.json',
  'config/approvers.json',
  'config/approver-policy.json',
  'src/index.js',
  'src/get-ticket.js',
  'src/priority-change.js',
  'src/ticket-schema.js',
  'src/ticket-store.js',
];

describe('gatehouse pack init', () => {
  const workspace = repositoryTempDir();
  afterAll(() => workspace.remove());

  it('scaffolds a pack that pack check passes: a read tool and a preview/commit pair that needs approval', async () => {
    const dir = join(workspace.dir, 'billing-tools');
    const init = captureIo();
    expect(await runCli(['pack', 'init', dir, '--json'], init)).toBe(ExitCode.ok);
    const made = JSON.parse(init.out()) as {
      dir: string;
      name: string;
      files: string[];
      demoApprover: { identity: string; token: string };
    };
    expect(made).toMatchObject({ dir, name: 'billing-tools', files: FILES, demoApprover: { identity: 'demo-lead@billing-tools.example' } });
    for (const file of FILES) expect(existsSync(join(dir, file)), file).toBe(true);
    // The demo approver's token is shown once (and in the README); the approvers file keeps only its hash.
    const approvers = readFileSync(join(dir, 'config/approvers.json'), 'utf8');
    expect(approvers).not.toContain(made.demoApprover.token);
    expect(approvers).toContain(createHash('sha256').update(made.demoApprover.token).digest('hex'));
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toContain(made.demoApprover.token);

    const check = captureIo();
    expect(await runCli(['pack', 'check', dir, '--json'], check)).toBe(ExitCode.ok);
    const report = JSON.parse(check.out()) as { name: string; checks: { check: string; result: string; count: number | null }[] };
    expect(report.name).toBe('billing-tools');
    expect(report.checks.filter((row) => row.result !== 'ok')).toEqual([]);
    expect(report.checks.find((row) => row.check === 'tools')?.count).toBe(3);
    expect(report.checks.find((row) => row.check === 'proposal cases')?.count).toBeGreaterThan(0);

    const catalog = captureIo();
    expect(await runCli(['catalog', 'show', '--pack', dir, '--json'], catalog)).toBe(ExitCode.ok);
    expect(
      (JSON.parse(catalog.out()) as { address: string; effect: string; approval: string | null }[]).map((t) => [
        t.address,
        t.effect,
        t.approval,
      ]),
    ).toEqual([
      ['commit_ticket_priority_change.v1', 'write', 'ticket-priority-change'],
      ['get_ticket.v1', 'read', null],
      ['preview_ticket_priority_change.v1', 'read', null],
    ]);
  });

  it('writes a package of plain ES modules over @gatehouse/sdk, with a README of next steps', async () => {
    const dir = join(workspace.dir, 'plain');
    expect(await runCli(['pack', 'init', dir], captureIo())).toBe(ExitCode.ok);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({
      name: 'plain',
      type: 'module',
      exports: { '.': './src/index.js' },
      dependencies: { '@gatehouse/sdk': '0.1.0' },
    });
    expect(readFileSync(join(dir, 'src/index.js'), 'utf8')).toMatch(
      /^\/\/ @ts-check\n[^]*import \{ defineToolPack \} from '@gatehouse\/sdk';[^]*export const plainPack = defineToolPack\(\{\n {2}name: 'plain',/,
    );
    expect(readFileSync(join(dir, 'src/priority-change.js'), 'utf8')).toContain('definePreviewCommit({');
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    for (const step of ['gatehouse pack check .', '--snapshot-file catalog.snapshot.json', 'GATEHOUSE_TOOL_PACK'])
      expect(readme).toContain(step);
  });

  it("points each document's $schema at the SDK's schemas nearest the pack, so an editor finds them", async () => {
    // Inside the clone: the workspace root's node_modules, which npm install linked.
    const dir = join(workspace.dir, 'inside');
    expect(await runCli(['pack', 'init', dir], captureIo())).toBe(ExitCode.ok);
    for (const document of ['roles', 'policy-table', 'approvers', 'approver-policy']) {
      const { $schema } = JSON.parse(readFileSync(join(dir, 'config', `${document}.json`), 'utf8')) as { $schema: string };
      expect($schema.endsWith(`node_modules/@gatehouse/sdk/schemas/${document}.schema.json`)).toBe(true);
      expect(existsSync(resolve(dir, 'config', $schema)), $schema).toBe(true);
    }
    // Outside any workspace: the pack's own node_modules, where its SDK tarball is installed.
    expect(schemaDirFor(join(tmpdir(), `no-such-pack-${Date.now()}`, 'tools'))).toBe('../node_modules/@gatehouse/sdk/schemas');
    expect(dirname(schemaDirFor(dir))).not.toBe('../node_modules/@gatehouse/sdk');
  });

  it('refuses a directory that is not empty with exit 2, and writes nothing into it', async () => {
    const dir = join(workspace.dir, 'taken');
    mkdirSync(dir);
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    const io = captureIo();
    expect(await runCli(['pack', 'init', dir], io)).toBe(ExitCode.usage);
    expect(io.err()).toContain(`${dir} is not empty`);
    expect(existsSync(join(dir, 'package.json'))).toBe(false);
  });

  it('names the pack after its directory unless --name is given, and refuses a name that is not lower-case words', async () => {
    const named = captureIo();
    expect(await runCli(['pack', 'init', join(workspace.dir, 'Support Tools'), '--json'], named)).toBe(ExitCode.ok);
    expect(JSON.parse(named.out())).toMatchObject({ name: 'support-tools' });
    const chosen = captureIo();
    expect(await runCli(['pack', 'init', join(workspace.dir, 'x1'), '--name', 'ledger', '--json'], chosen)).toBe(ExitCode.ok);
    expect(JSON.parse(chosen.out())).toMatchObject({ name: 'ledger' });
    for (const args of [[join(workspace.dir, 'bad-name'), '--name', 'Ledger_Tools'], [join(workspace.dir, '2024')]]) {
      const io = captureIo();
      expect(await runCli(['pack', 'init', ...args], io), args.join(' ')).toBe(ExitCode.usage);
      expect(io.err()).toMatch(/--name/);
    }
  });
});
