import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode, runCli } from '@gatehouse/cli';
import { customerSupportCatalog } from '@gatehouse/example-customer-support';
import { captureIo, repositoryTempDir } from './support.js';

const SNAPSHOT_FILE = fileURLToPath(new URL('../../../examples/customer-support/pack/catalog.snapshot.json', import.meta.url));
const CHECKS = [
  'load',
  'shape',
  'config',
  'tools',
  'schema lint',
  'roles',
  'policy table',
  'snapshot',
  'input cases',
  'proposal cases',
  'output schemas',
];

interface Row {
  check: string;
  result: 'ok' | 'failed' | 'skipped';
  count: number | null;
  detail: string;
  problems: string[];
}

interface Checked {
  code: number;
  report: { name: string | null; ok: boolean; checks: Row[] };
  out: string;
  err: string;
}

/** `gatehouse pack check <args> --json`: its exit code, the report on stdout and stderr. */
async function check(args: readonly string[], env: Record<string, string> = {}): Promise<Checked> {
  const io = captureIo({ env });
  const code = await runCli(['pack', 'check', ...args, '--json'], io);
  return { code, report: JSON.parse(io.out()) as Checked['report'], out: io.out(), err: io.err() };
}

const row = (checked: Checked, name: string): Row => {
  const found = checked.report.checks.find((r) => r.check === name);
  if (found === undefined) throw new Error(`no ${name} row`);
  return found;
};

const results = (checked: Checked): [string, string][] => checked.report.checks.map((r) => [r.check, r.result]);

describe('gatehouse pack check', () => {
  const workspace = repositoryTempDir();
  afterAll(() => workspace.remove());

  it('passes every check for the reference pack named by its package alone, counting what it checked', async () => {
    const checked = await check(['@gatehouse/example-customer-support']);
    expect(checked.code).toBe(ExitCode.ok);
    expect(results(checked)).toEqual(CHECKS.map((name) => [name, 'ok']));
    expect(checked.report).toMatchObject({ name: 'customer-support', ok: true });
    const tools = customerSupportCatalog().tools();
    expect(row(checked, 'tools').count).toBe(tools.length);
    expect(row(checked, 'output schemas').count).toBe(tools.length);
    expect(row(checked, 'roles').count).toBe(3);
    expect(row(checked, 'policy table').count).toBe(7);
    expect(row(checked, 'input cases').count).toBeGreaterThan(100);
    expect(row(checked, 'proposal cases').detail).toMatch(/; 2 schemas$/);
    expect(checked.err).toBe('');
  });

  it('passes every check for the refunds example, a pack of another domain, by its directory', async () => {
    const checked = await check(['./examples/refunds/pack'], {});
    expect(checked.code).toBe(ExitCode.ok);
    expect(checked.report.name).toBe('refunds');
    expect(results(checked).filter(([, result]) => result !== 'ok')).toEqual([]);
  });

  it('prints a table of check, result and count, and a summary line, without --json', async () => {
    const io = captureIo();
    expect(await runCli(['pack', 'check', '@gatehouse/example-customer-support#customerSupportPack'], io)).toBe(ExitCode.ok);
    const lines = io.out().trimEnd().split('\n');
    expect(lines[0]).toMatch(/^CHECK\s+RESULT\s+COUNT\s+DETAIL$/);
    expect(lines.slice(1, -1).map((line) => line.split(/\s{2,}/)[0])).toEqual(CHECKS);
    expect(lines.find((line) => line.startsWith('tools '))).toMatch(/^tools\s+ok\s+10\s+9 live, 1 retired/);
    expect(lines.at(-1)).toBe('customer-support: all 11 checks passed');
  });

  it('equals the checked-in catalog.snapshot.json, and prints that snapshot byte for byte with --snapshot', async () => {
    const pinned = await check(['@gatehouse/example-customer-support', '--snapshot-file', SNAPSHOT_FILE]);
    expect(pinned.code).toBe(ExitCode.ok);
    expect(row(pinned, 'snapshot')).toMatchObject({ result: 'ok', count: 3, detail: `same as ${SNAPSHOT_FILE}` });
    const io = captureIo();
    expect(await runCli(['pack', 'check', '@gatehouse/example-customer-support', '--snapshot'], io)).toBe(ExitCode.ok);
    expect(io.out()).toBe(readFileSync(SNAPSHOT_FILE, 'utf8'));
    expect(io.err()).toContain('customer-support: all 11 checks passed');
  });

  it('fails the snapshot check with exit 1, naming each difference from a pinned snapshot that drifted', async () => {
    const pinned = JSON.parse(readFileSync(SNAPSHOT_FILE, 'utf8')) as Record<string, { tool: string; approval: string | null }[]>;
    pinned['support-readonly'] = (pinned['support-readonly'] ?? []).filter((entry) => entry.tool !== 'get_operation.v1');
    pinned['auditor'] = [];
    const file = join(workspace.dir, 'drifted.snapshot.json');
    writeFileSync(file, `${JSON.stringify(pinned, null, 2)}\n`);
    const checked = await check(['@gatehouse/example-customer-support', '--snapshot-file', file]);
    expect(checked.code).toBe(ExitCode.refused);
    expect(row(checked, 'snapshot')).toMatchObject({
      result: 'failed',
      problems: [
        `${file}: role auditor is pinned but the pack has no such role`,
        `${file}: role support-readonly: get_operation.v1 is granted but not pinned`,
      ],
    });
    expect(results(checked).filter(([, result]) => result !== 'ok')).toEqual([['snapshot', 'failed']]);
    expect(JSON.parse(checked.err)).toMatchObject({ error: { code: 'PACK_CHECK_FAILED', exit_code: 1, failed: ['snapshot'] } });
  });

  it('reports a pack that cannot be loaded with the loader’s message and exit 1, skipping every other check', async () => {
    const checked = await check([join(workspace.dir, 'no-such-pack')]);
    expect(checked.code).toBe(ExitCode.refused);
    expect(row(checked, 'load')).toMatchObject({
      result: 'failed',
      problems: [`tool pack: ${join(workspace.dir, 'no-such-pack')} does not exist`],
    });
    expect(
      results(checked)
        .slice(1)
        .every(([, result]) => result === 'skipped'),
    ).toBe(true);
    expect(JSON.parse(checked.err)).toMatchObject({
      error: { code: 'PACK_LOAD_FAILED', message: expect.stringContaining('does not exist') as unknown },
    });
  });

  it('exits 2 without a pack or with a snapshot file it cannot read', async () => {
    const io = captureIo();
    expect(await runCli(['pack', 'check'], io)).toBe(ExitCode.usage);
    expect(io.err()).toContain('missing <pack>');
    const missing = captureIo();
    expect(
      await runCli(['pack', 'check', '@gatehouse/example-customer-support', '--snapshot-file', join(workspace.dir, 'none.json')], missing),
    ).toBe(ExitCode.usage);
    expect(missing.err()).toContain('cannot read the snapshot');
  });
});

describe('gatehouse pack check on a broken pack', () => {
  const workspace = repositoryTempDir();
  const pack = join(workspace.dir, 'broken-pack');
  const rolesFile = join(pack, 'config', 'roles.json');

  beforeAll(async () => {
    // A pack that is fine but for its roles: one names a tool the pack does not have.
    expect(await runCli(['pack', 'init', pack], captureIo())).toBe(ExitCode.ok);
    const roles = JSON.parse(readFileSync(rolesFile, 'utf8')) as { roles: Record<string, { tools: string[] }> };
    roles.roles['ticket-reader']?.tools.push('delete_ticket.v1');
    writeFileSync(rolesFile, JSON.stringify(roles));
  });
  afterAll(() => workspace.remove());

  it('fails with exit 1, listing the problem under roles and skipping what needs the hosted pack', async () => {
    const checked = await check([pack]);
    expect(checked.code).toBe(ExitCode.refused);
    expect(row(checked, 'roles')).toMatchObject({
      result: 'failed',
      problems: [`${rolesFile}: roles file is invalid: role ticket-reader: delete_ticket.v1 is not in the catalog`],
    });
    expect(results(checked)).toEqual([
      ['load', 'ok'],
      ['shape', 'ok'],
      ['config', 'ok'],
      ['tools', 'ok'],
      ['schema lint', 'ok'],
      ['roles', 'failed'],
      ['policy table', 'ok'],
      ['snapshot', 'skipped'],
      ['input cases', 'skipped'],
      ['proposal cases', 'skipped'],
      ['output schemas', 'skipped'],
    ]);
    const error = (JSON.parse(checked.err) as { error: { code: string; message: string; failed: string[] } }).error;
    expect(error).toMatchObject({ code: 'PACK_CHECK_FAILED', failed: ['roles'] });
    expect(error.message).toContain(
      `- roles: ${rolesFile}: roles file is invalid: role ticket-reader: delete_ticket.v1 is not in the catalog`,
    );
  });

  it('fails schema lint for an open object schema, leaving the roles and policy table unchecked', async () => {
    const open = join(workspace.dir, 'open-schema');
    expect(await runCli(['pack', 'init', open], captureIo())).toBe(ExitCode.ok);
    const schemas = join(open, 'src', 'ticket-schema.js');
    writeFileSync(
      schemas,
      readFileSync(schemas, 'utf8').replace(
        "type: 'object',\n  additionalProperties: false,\n  required: ['ticket_id', 'title'",
        "type: 'object',\n  required: ['ticket_id', 'title'",
      ),
    );
    const checked = await check([open]);
    expect(checked.code).toBe(ExitCode.refused);
    expect(row(checked, 'schema lint').result).toBe('failed');
    expect(row(checked, 'schema lint').problems).toContain(
      'tool get_ticket.v1 /output: object schema is open; add "additionalProperties": false or "unevaluatedProperties": false',
    );
    expect(results(checked).slice(3, 7)).toEqual([
      ['tools', 'ok'],
      ['schema lint', 'failed'],
      ['roles', 'skipped'],
      ['policy table', 'skipped'],
    ]);
  });

  it('fails the tools check with the error a throwing setup raised, and runs nothing after it', async () => {
    const throwing = join(workspace.dir, 'throwing-setup');
    expect(await runCli(['pack', 'init', throwing], captureIo())).toBe(ExitCode.ok);
    const index = join(throwing, 'src', 'index.js');
    writeFileSync(
      index,
      readFileSync(index, 'utf8').replace(
        'setup: (config) => ({',
        "setup: (config) => { throw new Error('no database'); }, unused: (config) => ({",
      ),
    );
    const checked = await check([throwing]);
    expect(checked.code).toBe(ExitCode.refused);
    expect(row(checked, 'tools')).toMatchObject({ result: 'failed', problems: ['setup or tools threw: no database'] });
    expect(
      results(checked)
        .slice(4)
        .every(([, result]) => result === 'skipped'),
    ).toBe(true);
  });

  it('passes once --roles-file or GATEHOUSE_ROLES_FILE names a roles document that fits the pack', async () => {
    const fixed = join(workspace.dir, 'roles.json');
    writeFileSync(
      fixed,
      JSON.stringify({ roles: { 'ticket-reader': { description: 'Reads tickets.', readOnly: true, tools: ['get_ticket.v1'] } } }),
    );
    for (const checked of [await check([pack, '--roles-file', fixed]), await check([pack], { GATEHOUSE_ROLES_FILE: fixed })]) {
      expect(checked.code).toBe(ExitCode.ok);
      expect(row(checked, 'roles')).toMatchObject({ result: 'ok', count: 1, detail: fixed });
    }
  });
});
