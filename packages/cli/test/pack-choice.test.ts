import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode, runCli } from '@gatehouse/cli';
import { captureIo, repositoryTempDir } from './support.js';

const REFERENCE = '@gatehouse/example-customer-support#customerSupportPack';
const TRACE = fileURLToPath(new URL('../../../examples/customer-support/traces/demo-support-agent.trace.json', import.meta.url));

/** One command line with an environment: exit code, stdout, stderr. */
async function gatehouse(args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  const io = captureIo({ env });
  const code = await runCli(args, io);
  return { code, out: io.out(), err: io.err() };
}

const addresses = (out: string): string[] => (JSON.parse(out) as { address: string }[]).map((row) => row.address);

describe('the pack a catalog or trace command works on', () => {
  const workspace = repositoryTempDir();
  const scaffold = join(workspace.dir, 'ticket-tools');
  beforeAll(async () => {
    expect(await runCli(['pack', 'init', scaffold], captureIo())).toBe(ExitCode.ok);
  });
  afterAll(() => workspace.remove());

  it('is a usage error (exit 2) naming --pack and GATEHOUSE_TOOL_PACK when neither is given', async () => {
    for (const args of [
      ['catalog', 'show'],
      ['catalog', 'export', '--format', 'mcp'],
      ['trace', 'replay', TRACE],
    ]) {
      const run = await gatehouse(args, { GATEHOUSE_TOOL_PACK: '' });
      expect(run.code, args.join(' ')).toBe(ExitCode.usage);
      expect(run.err, args.join(' ')).toMatch(/pass --pack <package name or path> or set GATEHOUSE_TOOL_PACK/);
      expect(run.out).toBe('');
    }
  });

  it('is the one --pack names, else the one GATEHOUSE_TOOL_PACK names', async () => {
    const byEnv = await gatehouse(['catalog', 'show', '--json'], { GATEHOUSE_TOOL_PACK: REFERENCE });
    expect(byEnv.code).toBe(ExitCode.ok);
    expect(addresses(byEnv.out)).toContain('get_customer.v1');
    const byFlag = await gatehouse(['catalog', 'show', '--pack', scaffold, '--json'], { GATEHOUSE_TOOL_PACK: REFERENCE });
    expect(addresses(byFlag.out)).toEqual(['commit_ticket_priority_change.v1', 'get_ticket.v1', 'preview_ticket_priority_change.v1']);
  });

  it('uses the pack’s own roles unless --roles-file or GATEHOUSE_ROLES_FILE names another', async () => {
    const own = await gatehouse(['catalog', 'show', '--pack', scaffold, '--role', 'ticket-reader', '--json']);
    expect(addresses(own.out)).toEqual(['get_ticket.v1']);
    const file = join(workspace.dir, 'roles.json');
    writeFileSync(file, JSON.stringify({ roles: { auditor: { description: 'Audits.', readOnly: true, tools: ['get_ticket.v1'] } } }));
    for (const run of [
      await gatehouse(['catalog', 'show', '--pack', scaffold, '--role', 'auditor', '--roles-file', file, '--json']),
      await gatehouse(['catalog', 'show', '--pack', scaffold, '--role', 'auditor', '--json'], { GATEHOUSE_ROLES_FILE: file }),
    ]) {
      expect(run.code).toBe(ExitCode.ok);
      expect(addresses(run.out)).toEqual(['get_ticket.v1']);
    }
    const missing = await gatehouse(['catalog', 'show', '--pack', scaffold, '--roles-file', join(workspace.dir, 'none.json')]);
    expect(missing.code).toBe(ExitCode.usage);
    expect(missing.err).toContain('no roles file at');
  });

  it('refuses a pack that cannot be loaded with exit 1 and the loader’s message, hinting at ./ for a local directory', async () => {
    const absent = await gatehouse(['catalog', 'show', '--pack', '@acme/no-such-tools', '--json']);
    expect(absent.code).toBe(ExitCode.refused);
    expect(JSON.parse(absent.err)).toMatchObject({
      error: { code: 'PACK_LOAD_FAILED', message: expect.stringContaining('@acme/no-such-tools could not be imported') as unknown },
    });
    const bare = relative(process.cwd(), scaffold);
    const run = await gatehouse(['catalog', 'show', '--pack', bare]);
    expect(run.code).toBe(ExitCode.refused);
    expect(run.err).toContain(`for the path here write ./${bare}`);
  });

  it('refuses a pack whose roles do not fit its catalog with exit 1, naming the roles file and every problem', async () => {
    const broken = join(workspace.dir, 'broken');
    expect(await runCli(['pack', 'init', broken], captureIo())).toBe(ExitCode.ok);
    const rolesFile = join(broken, 'config', 'roles.json');
    const roles = JSON.parse(readFileSync(rolesFile, 'utf8')) as { roles: Record<string, { tools: string[] }> };
    roles.roles['ticket-reader']?.tools.push('delete_ticket.v1', 'commit_ticket_priority_change.v1');
    writeFileSync(rolesFile, JSON.stringify(roles));
    const run = await gatehouse(['catalog', 'export', '--format', 'mcp', '--pack', broken, '--json']);
    expect(run.code).toBe(ExitCode.refused);
    expect(run.out).toBe('');
    const { error } = JSON.parse(run.err) as { error: { code: string; message: string; problems: string[] } };
    expect(error.code).toBe('ROLES_INVALID');
    expect(error.problems).toEqual([
      `${rolesFile}: roles file is invalid: role ticket-reader: delete_ticket.v1 is not in the catalog; role ticket-reader is read-only but lists the write tool commit_ticket_priority_change.v1`,
    ]);
    expect(error.message).toMatch(/^tool pack broken: definition is invalid \(1 problem\):\n- /);
  });
});
