import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ToolContract } from '@gatehouse/contracts';
import { PolicyTable } from '@gatehouse/governance';
import type { PolicyMatch, PolicySubject } from '@gatehouse/governance';
import { commitTransfer, lookupV2, sendNotice, startExport, TABLE_DOCUMENT, table, tools } from './fixtures.js';

const subject = (tool: ToolContract, overrides: Partial<PolicySubject> = {}): PolicySubject => ({
  tool,
  environment: 'production',
  affectedRecords: 1,
  amount: null,
  recipients: [],
  irreversible: [],
  ...overrides,
});

/** A one-rule table that allows what `match` matches. */
const only = (match: PolicyMatch): PolicyTable =>
  PolicyTable.parse({ rules: [{ id: 'the-rule', description: 'Under test.', match, decision: { kind: 'allow' } }] }, tools);
const matches = (match: PolicyMatch, s: PolicySubject): boolean => only(match).evaluate(s).ruleId === 'the-rule';

const problemsOf = (document: unknown): string => {
  try {
    PolicyTable.parse(document, tools);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  return expect.fail('the table parsed');
};

describe('evaluating the policy table', () => {
  it('decides by the first rule that matches, in the table’s order', () => {
    expect(table.evaluate(subject(commitTransfer))).toEqual({
      ruleId: 'transfer-lead',
      decision: { kind: 'require_approval', approverRole: 'lead', ttlMs: 600_000 },
    });
    expect(table.evaluate(subject(commitTransfer, { affectedRecords: 101 })).ruleId).toBe('bulk-ops');
    expect(table.evaluate(subject(startExport)).decision).toEqual({ kind: 'allow' });
    expect(table.evaluate(subject(sendNotice)).decision).toEqual({ kind: 'deny', reason: 'Notices are sent by people', next: 'a person' });
  });

  it('denies what no rule matches', () => {
    expect(table.evaluate(subject(lookupV2))).toEqual({
      ruleId: 'default-deny',
      decision: { kind: 'deny', reason: 'No policy rule allows this effect' },
    });
  });

  it('matches on effect, tool address, approval rule and environment', () => {
    expect(matches({ effect: 'write' }, subject(startExport))).toBe(true);
    expect(matches({ effect: 'write' }, subject(lookupV2))).toBe(false);
    expect(matches({ tools: ['start_export.v1'] }, subject(startExport))).toBe(true);
    expect(matches({ tools: ['start_export.v1'] }, subject(sendNotice))).toBe(false);
    expect(matches({ approvalRules: ['export'] }, subject(startExport))).toBe(true);
    expect(matches({ approvalRules: ['export'] }, subject(lookupV2))).toBe(false);
    expect(matches({ environments: ['sandbox'] }, subject(startExport, { environment: 'sandbox' }))).toBe(true);
    expect(matches({ environments: ['sandbox'] }, subject(startExport))).toBe(false);
  });

  it('matches destructive tools, and only them, when asked', () => {
    const destructive = { ...startExport, destructive: true } as ToolContract;
    expect(matches({ destructive: true }, subject(destructive))).toBe(true);
    expect(matches({ destructive: true }, subject(startExport))).toBe(false);
    expect(matches({ destructive: false }, subject(startExport))).toBe(true);
  });

  it('matches more affected records than the threshold, never as many', () => {
    expect(matches({ affectedRecordsOver: 100 }, subject(startExport, { affectedRecords: 101 }))).toBe(true);
    expect(matches({ affectedRecordsOver: 100 }, subject(startExport, { affectedRecords: 100 }))).toBe(false);
  });

  it('matches an amount over its currency’s threshold, any amount in a currency not listed, and no missing amount', () => {
    const over = { amountOver: [{ minor: 100_000, currency: 'EUR' }] };
    expect(matches(over, subject(startExport, { amount: { minor: 100_001, currency: 'EUR' } }))).toBe(true);
    expect(matches(over, subject(startExport, { amount: { minor: 100_000, currency: 'EUR' } }))).toBe(false);
    expect(matches(over, subject(startExport, { amount: { minor: 1, currency: 'JPY' } }))).toBe(true);
    expect(matches(over, subject(startExport))).toBe(false);
  });

  it('matches external recipients and irreversible effects by whether there are any', () => {
    expect(matches({ externalRecipients: true }, subject(sendNotice, { recipients: ['a@example.com'] }))).toBe(true);
    expect(matches({ externalRecipients: true }, subject(sendNotice))).toBe(false);
    expect(matches({ externalRecipients: false }, subject(sendNotice))).toBe(true);
    expect(matches({ irreversible: true }, subject(sendNotice, { irreversible: ['delivered'] }))).toBe(true);
    expect(matches({ irreversible: false }, subject(sendNotice, { irreversible: ['delivered'] }))).toBe(false);
  });

  it('needs every condition of a rule to match', () => {
    expect(
      matches({ effect: 'write', environments: ['production'], affectedRecordsOver: 5 }, subject(startExport, { affectedRecords: 6 })),
    ).toBe(true);
    expect(
      matches(
        { effect: 'write', environments: ['production'], affectedRecordsOver: 5 },
        subject(startExport, { affectedRecords: 6, environment: 'staging' }),
      ),
    ).toBe(false);
  });
});

describe('parsing a policy table', () => {
  it('refuses rules naming a tool or an approval rule that does not exist, and a repeated id, listing each', () => {
    const document = structuredClone(TABLE_DOCUMENT) as { rules: Record<string, unknown>[] };
    document.rules[0] = { ...document.rules[0], match: { tools: ['delete_all.v1'] } };
    document.rules[1] = { ...document.rules[1], match: { approvalRules: ['teleport'] } };
    document.rules[2] = { ...document.rules[2], id: 'export-allow' };
    expect(problemsOf(document)).toBe(
      'policy table is invalid: rule production-destructive-deny names unknown tool delete_all.v1; rule bulk-ops names approval rule teleport, which no tool declares; rule export-allow appears twice',
    );
  });

  it('refuses a malformed table: an unknown decision, a too-short approval, an unknown match key, no rules', () => {
    const rule = (decision: unknown, match: unknown = {}) => ({ rules: [{ id: 'x', description: 'x', match, decision }] });
    expect(problemsOf(rule({ kind: 'maybe' }))).toMatch(/^policy table is invalid: /);
    expect(problemsOf(rule({ kind: 'require_approval', approverRole: 'lead', ttlMs: 999 }))).toMatch(/policy table is invalid/);
    expect(problemsOf(rule({ kind: 'allow' }, { colour: 'red' }))).toContain('must NOT have additional properties');
    expect(problemsOf({ rules: [] })).toContain('must NOT have fewer than 1 items');
  });

  it('reads a table file from disk', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'gatehouse-table-')), 'table.json');
    writeFileSync(file, JSON.stringify(TABLE_DOCUMENT));
    expect(PolicyTable.load(file, tools).rules.map((r) => r.id)).toEqual(TABLE_DOCUMENT.rules.map((r) => r.id));
  });
});
