// The gatehouse CLI, run as a child process from its build: the catalog commands (no stack needed)
// and the command-line contract (help, usage errors, exit codes) that scripts rely on.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { toMcpTool, toOpenAiFunction } from '@gatehouse/contracts';
import { loadRoles } from '@gatehouse/governance';
import { REFERENCE_ROLES_FILE } from './support/reference-pack.js';
import { customerSupportCatalog } from '@gatehouse/example-customer-support';

const MAIN = fileURLToPath(new URL('../packages/cli/dist/main.js', import.meta.url));
const SNAPSHOT = fileURLToPath(new URL('../examples/customer-support/pack/catalog.snapshot.json', import.meta.url));

interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The tool pack every invocation works on: the reference pack, named as a deployment names it. */
const PACK_ENV = { GATEHOUSE_TOOL_PACK: '@gatehouse/example-customer-support#customerSupportPack' };

function gatehouse(args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, ...args],
      { env: { ...process.env, ...PACK_ENV, ...env }, timeout: 30_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
      },
    );
  });
}

const catalog = customerSupportCatalog();
const roles = loadRoles(REFERENCE_ROLES_FILE, catalog);

describe('gatehouse catalog', () => {
  it('shows every tool version with its effect, retry class, approval rule, retirement and rate limit', async () => {
    const run = await gatehouse(['catalog', 'show']);
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ADDRESS\s+EFFECT\s+RETRY\s+APPROVAL\s+RETIRED\s+RATE LIMIT$/);
    expect(lines).toHaveLength(catalog.tools().length + 1);
    expect(lines.find((l) => l.startsWith('commit_address_change.v1 '))).toMatch(
      /write\s+idempotent\s+address-change\s+yes → commit_address_change\.v2/,
    );
    expect(lines.find((l) => l.startsWith('send_customer_email.v1 '))).toMatch(
      /write\s+idempotent\s+customer-email\s+no\s+20\/1m per tenant$/,
    );
    expect(lines.find((l) => l.startsWith('get_operation.v1 '))).toMatch(/read\s+safe\s+-\s+no\s+-$/);
  });

  it('shows one role’s tools as JSON with --json', async () => {
    const run = await gatehouse(['catalog', 'show', '--role', 'support-readonly', '--json']);
    expect(run.code).toBe(0);
    const rows = JSON.parse(run.stdout) as { address: string; effect: string }[];
    expect(rows.map((r) => r.address)).toEqual([...(roles['support-readonly']?.tools ?? [])].sort());
    expect(rows.every((r) => r.effect === 'read')).toBe(true);
  });

  it('exports the live tools as MCP tools and OpenAI functions, exactly as the contracts package makes them', async () => {
    const live = catalog.tools().filter((t) => t.retired !== true);
    const mcp = await gatehouse(['catalog', 'export', '--format', 'mcp']);
    expect(mcp.code).toBe(0);
    expect(JSON.parse(mcp.stdout)).toEqual({ tools: live.map(toMcpTool) });
    const openai = await gatehouse(['catalog', 'export', '--format', 'openai']);
    expect(openai.code).toBe(0);
    expect(JSON.parse(openai.stdout)).toEqual({ tools: live.map(toOpenAiFunction) });
  });

  it('exports only a role’s tools with --role', async () => {
    const run = await gatehouse(['catalog', 'export', '--format', 'mcp', '--role', 'support-agent']);
    expect(run.code).toBe(0);
    const names = (JSON.parse(run.stdout) as { tools: { name: string }[] }).tools.map((t) => t.name);
    const expected = catalog.tools().filter((t) => roles['support-agent']?.tools.includes(t.address) === true && t.retired !== true);
    expect(names).toEqual(expected.map((t) => toMcpTool(t).name));
    expect(names).not.toContain('start_customer_export_v1');
  });

  it('exports the per-role snapshot byte for byte as the checked-in catalog.snapshot.json', async () => {
    const run = await gatehouse(['catalog', 'export', '--format', 'snapshot']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(readFileSync(SNAPSHOT, 'utf8'));
  });

  it('refuses an unknown format or role as a usage error (exit 2) naming the choices', async () => {
    const format = await gatehouse(['catalog', 'export', '--format', 'yaml']);
    expect(format.code).toBe(2);
    expect(format.stderr).toContain('mcp, openai, snapshot');
    const role = await gatehouse(['catalog', 'show', '--role', 'nobody']);
    expect(role.code).toBe(2);
    expect(role.stderr).toContain('ops-admin, support-agent, support-readonly');
    expect(role.stdout).toBe('');
  });
});

describe('the gatehouse command line', () => {
  it('prints help on stdout with exit 0 when asked, and on stderr with exit 2 when no command is given', async () => {
    const help = await gatehouse(['--help']);
    expect(help.code).toBe(0);
    for (const group of ['runs', 'approvals', 'operations', 'dlq', 'catalog', 'trace']) expect(help.stdout).toContain(`\n  ${group} `);
    const bare = await gatehouse([]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe('');
    expect(bare.stderr).toContain('Usage: gatehouse <command>');
    const sub = await gatehouse(['dlq', 'replay', '--help']);
    expect(sub.code).toBe(0);
    expect(sub.stdout).toContain('Usage: gatehouse dlq replay --topic <topic> [--reason <REASON>] [--dry-run] [--json]');
  });

  it('exits 2 on an unknown command, subcommand or option and on a missing argument', async () => {
    const cases: (readonly string[])[] = [
      ['deploy'],
      ['runs'],
      ['runs', 'delete'],
      ['catalog', 'show', '--colour'],
      ['approvals', 'show'],
      ['runs', 'create', '--tenant', 'acme'],
    ];
    for (const args of cases) {
      const run = await gatehouse(args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr, args.join(' ')).toMatch(/gatehouse: /);
    }
    const json = await gatehouse(['deploy', '--json']);
    expect(JSON.parse(json.stderr)).toMatchObject({ error: { code: 'USAGE', exit_code: 2 } });
  });

  it('replays a recorded trace against the current catalog, and refuses a file it cannot read', async () => {
    const { buildTrace, traceJson } = await import('@gatehouse/trace');
    const { customerSupportCatalog } = await import('@gatehouse/example-customer-support');
    const file = join(mkdtempSync(join(tmpdir(), 'gatehouse-trace-')), 'run.json');
    const now = Date.now();
    const events = {
      commands: [
        {
          schema_version: 1,
          command_id: 'c1',
          run_id: 'run_cli',
          tenant: 'acme',
          tool: 'get_customer.v1',
          arguments: '{"customer_id":"C-1842"}',
          sent_at: now,
          deadline_at: null,
        },
      ],
      results: [
        {
          schema_version: 1,
          command_id: 'c1',
          run_id: 'run_cli',
          tenant: 'acme',
          tool: 'get_customer.v1',
          status: 'ok' as const,
          operation_id: 'op_1',
          result: '{"customer_id":"C-1842"}',
          error: null,
          pending: null,
          arguments_sha256: null,
          completed_at: now,
          duration_ms: 3,
        },
      ],
      approvalsRequested: [],
      approvalsDecided: [],
      orders: [],
    };
    writeFileSync(file, traceJson(buildTrace({ runId: 'run_cli', catalog: customerSupportCatalog(), events })));
    const replay = await gatehouse(['trace', 'replay', file, '--json']);
    expect(replay.code).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ catalogChanged: false, differences: 0 });
    const missing = await gatehouse(['trace', 'replay', join(tmpdir(), 'no-such-trace.json')]);
    expect(missing.code).toBe(2);
    const noOut = await gatehouse(['trace', 'record', 'run_cli']);
    expect(noOut.code).toBe(2);
    // A trace of what no key vouches for is refused before anything is contacted.
    const noKeys = await gatehouse(['trace', 'record', 'run_cli', '--out', join(tmpdir(), `trace-${process.pid}.json`)], {
      GATEHOUSE_POLICY_KEYS: '',
      GATEHOUSE_APPROVAL_KEYS: '',
      GATEHOUSE_EXECUTOR_KEYS: '',
      KAFKA_BROKERS: '127.0.0.1:1',
    });
    expect(noKeys.code).toBe(2);
    expect(noKeys.stderr).toContain('set GATEHOUSE_POLICY_KEYS, GATEHOUSE_APPROVAL_KEYS, GATEHOUSE_EXECUTOR_KEYS');
  });

  it('exits 2 when a needed setting is missing, before contacting anything', async () => {
    const run = await gatehouse(['runs', 'list', '--tenant', 'acme'], { GATEHOUSE_CONTROL_TOKEN: '' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('GATEHOUSE_CONTROL_TOKEN is not set');
  });
});
