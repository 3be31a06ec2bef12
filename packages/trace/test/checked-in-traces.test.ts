import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PolicyTable } from '@gatehouse/governance';
import { customerSupportCatalog } from '@gatehouse/example-customer-support';
import { formatReport, parseTrace, replayTrace } from '@gatehouse/trace';

// Traces recorded from real runs (`gatehouse trace record`, redacted) are kept in traces/ and
// replayed on every test run: a schema, catalog or policy-table change that alters what a recorded
// call was allowed to do fails here. When the change is intended, record the trace again.
const DIR = fileURLToPath(new URL('../../../examples/customer-support/traces/', import.meta.url));
// The reference pack's policy table, which the services load when they host it.
const POLICY_TABLE_FILE = fileURLToPath(new URL('../../../examples/customer-support/pack/config/policy-table.json', import.meta.url));
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.trace.json'))
  .sort();

describe('the recorded traces in traces/', () => {
  it('are there to replay', () => {
    expect(files.length).toBeGreaterThanOrEqual(2);
  });

  it.each(files)('%s replays against the current catalog and policy table with no call changed', (file) => {
    const trace = parseTrace(readFileSync(`${DIR}${file}`, 'utf8'));
    const catalog = customerSupportCatalog();
    const report = replayTrace(trace, catalog, {
      policyTable: PolicyTable.load(POLICY_TABLE_FILE, catalog.tools()),
      environment: 'production',
    });
    expect(report.calls.length).toBe(trace.calls.length);
    expect(report.calls.length).toBeGreaterThan(0);
    expect(report.differences, formatReport(report)).toBe(0);
    expect(
      report.invariants.filter((i) => !i.holds),
      formatReport(report),
    ).toEqual([]);
  });
});
