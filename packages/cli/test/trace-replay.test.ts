import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ExitCode, runCli } from '@gatehouse/cli';
import { PolicyTable } from '@gatehouse/governance';
import { customerSupportCatalog } from '@gatehouse/example-customer-support';
import { parseTrace, replayTrace, traceJson } from '@gatehouse/trace';
import type { ReplayReport } from '@gatehouse/trace';
import { captureIo } from './support.js';

const TRACES = fileURLToPath(new URL('../../../examples/customer-support/traces/', import.meta.url));
const POLICY_TABLE_FILE = fileURLToPath(new URL('../../../examples/customer-support/pack/config/policy-table.json', import.meta.url));
const files = readdirSync(TRACES)
  .filter((f) => f.endsWith('.trace.json'))
  .sort();
const AGENT_TRACE = `${TRACES}demo-support-agent.trace.json`;

/** The reference pack, as the environment names it to every command. */
const PACK_ENV = { GATEHOUSE_TOOL_PACK: '@gatehouse/example-customer-support#customerSupportPack' };

/** `gatehouse trace replay <file> --json …` against the reference pack: its exit code and the report it printed. */
async function replay(
  file: string,
  args: readonly string[] = [],
  env: Record<string, string> = {},
): Promise<{ code: number; report: ReplayReport; err: string }> {
  const io = captureIo({ env: { ...PACK_ENV, ...env } });
  const code = await runCli(['trace', 'replay', file, '--json', ...args], io);
  return { code, report: (io.out() === '' ? undefined : JSON.parse(io.out())) as ReplayReport, err: io.err() };
}

/** A policy table file in a fresh directory. */
function tableFile(rules: readonly unknown[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'gatehouse-table-')), 'policy-table.json');
  writeFileSync(file, JSON.stringify({ rules }));
  return file;
}

const denyWrites = {
  id: 'deny-writes',
  description: 'No writes.',
  match: { effect: 'write' },
  decision: { kind: 'deny', reason: 'no writes' },
};

describe('gatehouse trace replay', () => {
  it.each(files)('reports %s exactly as packages/trace/test/checked-in-traces.test.ts replays it', async (file) => {
    const catalog = customerSupportCatalog();
    const expected = replayTrace(parseTrace(readFileSync(`${TRACES}${file}`, 'utf8')), catalog, {
      policyTable: PolicyTable.load(POLICY_TABLE_FILE, catalog.tools()),
      environment: 'production',
    });
    const { code, report } = await replay(`${TRACES}${file}`);
    expect(report).toEqual(JSON.parse(JSON.stringify(expected)));
    expect(report.differences).toBe(0);
    expect(code).toBe(ExitCode.ok);
  });

  it('re-decides the recorded writes with the pack’s own policy table by default', async () => {
    const { report } = await replay(AGENT_TRACE);
    expect(report.calls.filter((c) => c.why.includes('policy table')).map((c) => c.after)).toEqual([
      { status: 'pending_approval', role: 'support-lead' },
      { status: 'pending_approval', role: 'support-lead' },
      { status: 'pending_approval', role: 'support-lead' },
    ]);
  });

  it('re-decides writes with the table named by --policy-table, else GATEHOUSE_POLICY_TABLE_FILE, and exits 1 when they change', async () => {
    const denying = tableFile([denyWrites]);
    for (const run of [
      await replay(AGENT_TRACE, ['--policy-table', denying]),
      await replay(AGENT_TRACE, [], { GATEHOUSE_POLICY_TABLE_FILE: denying }),
    ]) {
      expect(run.code).toBe(ExitCode.refused);
      expect(run.report.differences).toBe(3);
      expect(run.report.calls.filter((c) => c.differs).map((c) => c.after)).toEqual(
        Array.from({ length: 3 }, () => ({ status: 'refused', code: 'POLICY_DENIED' })),
      );
    }
    const flagWins = await replay(AGENT_TRACE, ['--policy-table', POLICY_TABLE_FILE], { GATEHOUSE_POLICY_TABLE_FILE: denying });
    expect(flagWins.code).toBe(ExitCode.ok);
  });

  it('decides writes whose trace names no environment in --environment, production by default', async () => {
    const recorded = parseTrace(readFileSync(AGENT_TRACE, 'utf8'));
    const unplaced = {
      ...recorded,
      calls: recorded.calls.map(({ policy, ...call }) =>
        call.decision.status === 'pending_approval' ? call : { ...call, ...(policy === undefined ? {} : { policy }) },
      ),
    };
    const file = join(mkdtempSync(join(tmpdir(), 'gatehouse-trace-')), 'unplaced.trace.json');
    writeFileSync(file, traceJson(unplaced));
    const sandboxOnly = tableFile([
      {
        id: 'sandbox-lead',
        description: 'Sandbox writes need a lead.',
        match: { effect: 'write', environments: ['sandbox'] },
        decision: { kind: 'require_approval', approverRole: 'support-lead', ttlMs: 60_000 },
      },
    ]);
    expect((await replay(file, ['--policy-table', sandboxOnly, '--environment', 'sandbox'])).report.differences).toBe(0);
    const production = await replay(file, ['--policy-table', sandboxOnly]);
    expect(production.code).toBe(ExitCode.refused);
    expect(production.report.differences).toBe(3);
  });

  it('exits 2 when the policy table file is missing and 1 when it is invalid, naming the file', async () => {
    const missing = join(tmpdir(), 'no-such-policy-table.json');
    const absent = await replay(AGENT_TRACE, ['--policy-table', missing]);
    expect(absent.code).toBe(ExitCode.usage);
    expect(absent.err).toContain(missing);
    const unknownTool = tableFile([{ ...denyWrites, match: { tools: ['delete_everything.v1'] } }]);
    const invalid = await replay(AGENT_TRACE, ['--policy-table', unknownTool]);
    expect(invalid.code).toBe(ExitCode.refused);
    expect(JSON.parse(invalid.err)).toMatchObject({
      error: { code: 'POLICY_TABLE_INVALID', message: expect.stringContaining(`${unknownTool}: policy table is invalid`) as unknown },
    });
  });
});
