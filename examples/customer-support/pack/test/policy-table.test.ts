import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { PolicyTable } from '@gatehouse/governance';
import type { PolicySubject } from '@gatehouse/governance';
import { customerSupportPack, customerSupportCatalog } from '@gatehouse/example-customer-support';
import type { ToolContract } from '@gatehouse/contracts';

const DEFAULT_POLICY_TABLE_FILE = fileURLToPath(customerSupportPack.policyTable);
const catalog = customerSupportCatalog();
const table = PolicyTable.load(DEFAULT_POLICY_TABLE_FILE, catalog.tools());
const tool = (address: string): ToolContract => {
  const found = catalog.get(address);
  if (found === undefined) throw new Error(`no ${address}`);
  return found;
};
const subject = (address: string, overrides: Partial<PolicySubject> = {}): PolicySubject => ({
  tool: tool(address),
  environment: 'production',
  affectedRecords: 1,
  amount: null,
  recipients: [],
  irreversible: [],
  ...overrides,
});

describe('the policy table', () => {
  it('asks a support lead to approve an address change', () => {
    expect(table.evaluate(subject('commit_address_change.v2'))).toEqual({
      ruleId: 'address-change-support-lead',
      decision: { kind: 'require_approval', approverRole: 'support-lead', ttlMs: 900_000 },
    });
  });

  it('asks for approval of an email to a customer', () => {
    const decided = table.evaluate(subject('send_customer_email.v1', { recipients: ['marta@example.com'], irreversible: ['delivered'] }));
    expect(decided.decision).toMatchObject({ kind: 'require_approval', approverRole: 'support-lead' });
  });

  it('escalates a bulk change over 100 records and a payment over 1,000.00 to ops-admin', () => {
    expect(table.evaluate(subject('commit_address_change.v2', { affectedRecords: 101 })).ruleId).toBe('bulk-change-ops-admin');
    expect(table.evaluate(subject('commit_address_change.v2', { affectedRecords: 100 })).ruleId).toBe('address-change-support-lead');
    expect(table.evaluate(subject('commit_address_change.v2', { amount: { minor: 100_001, currency: 'EUR' } })).ruleId).toBe(
      'payment-over-1000-ops-admin',
    );
    expect(table.evaluate(subject('commit_address_change.v2', { amount: { minor: 100_000, currency: 'EUR' } })).ruleId).toBe(
      'address-change-support-lead',
    );
    expect(table.evaluate(subject('commit_address_change.v2', { amount: { minor: 5, currency: 'JPY' } })).ruleId).toBe(
      'payment-over-1000-ops-admin',
    );
  });

  it('allows exports and cancellation without a person', () => {
    expect(table.evaluate(subject('start_customer_export.v1')).decision).toEqual({ kind: 'allow' });
    expect(table.evaluate(subject('cancel_operation.v1')).decision).toEqual({ kind: 'allow' });
  });

  it('denies destructive writes in production and anything no rule names', () => {
    const destructive = { ...tool('cancel_operation.v1'), destructive: true } as ToolContract;
    expect(table.evaluate({ ...subject('cancel_operation.v1'), tool: destructive }).decision.kind).toBe('deny');
    expect(table.evaluate({ ...subject('cancel_operation.v1'), tool: destructive, environment: 'sandbox' }).decision.kind).toBe('allow');
    expect(table.evaluate(subject('get_customer.v1'))).toMatchObject({ ruleId: 'default-deny', decision: { kind: 'deny' } });
  });

  it('refuses at start-up a table that names unknown tools or rules, or is malformed', () => {
    const document = JSON.parse(readFileSync(DEFAULT_POLICY_TABLE_FILE, 'utf8')) as { rules: Record<string, unknown>[] };
    const unknownTool = structuredClone(document);
    unknownTool.rules[0] = { ...unknownTool.rules[0], match: { tools: ['delete_all.v1'] } };
    expect(() => PolicyTable.parse(unknownTool, catalog.tools())).toThrowError(/unknown tool delete_all.v1/);
    const unknownRule = structuredClone(document);
    unknownRule.rules[0] = { ...unknownRule.rules[0], match: { approvalRules: ['teleport'] } };
    expect(() => PolicyTable.parse(unknownRule, catalog.tools())).toThrowError(/approval rule teleport/);
    expect(() =>
      PolicyTable.parse({ rules: [{ id: 'x', description: 'x', match: {}, decision: { kind: 'maybe' } }] }, catalog.tools()),
    ).toThrowError(/policy table is invalid/);
  });
});
