// The per-role snapshot of the reference catalog, pinned by a checked-in file, and the invariants a
// catalog change must keep: writes are approved and never retried blindly, commits take only a
// proposal id, and read-only roles never reach a write.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Catalog, ContractError, defineTool, snapshotByRole, snapshotJson } from '@gatehouse/contracts';
import type { RoleSnapshot, ToolContract } from '@gatehouse/contracts';
import { loadRoles } from '@gatehouse/governance';
import type { Roles } from '@gatehouse/governance';
import { customerSupportCatalog } from '@gatehouse/example-customer-support';

const SNAPSHOT_FILE = new URL('../catalog.snapshot.json', import.meta.url);
const ROLES_FILE = fileURLToPath(new URL('../config/roles.json', import.meta.url));

const toolLists = (roles: Roles): Record<string, readonly string[]> =>
  Object.fromEntries(Object.entries(roles).map(([name, role]) => [name, role.tools]));

const readOnlyFlags = (roles: Roles): Record<string, boolean> =>
  Object.fromEntries(Object.entries(roles).map(([name, role]) => [name, role.readOnly]));

/**
 * Every place a read-only role can reach a write in `snapshot`, one line each. A read-only role
 * missing from the snapshot is a violation too: nothing would then show what it can call.
 * (This belongs in @gatehouse/contracts next to snapshotByRole; see the report.)
 */
function readOnlyViolations(snapshot: RoleSnapshot, readOnly: Readonly<Record<string, boolean>>): string[] {
  const violations: string[] = [];
  for (const [role, isReadOnly] of Object.entries(readOnly)) {
    if (!isReadOnly) continue;
    const entries = snapshot[role];
    if (entries === undefined) violations.push(`role ${role} is read-only but has no snapshot`);
    for (const entry of entries ?? []) {
      if (entry.effect === 'write') violations.push(`role ${role} is read-only but can call the write ${entry.tool}`);
    }
  }
  return violations;
}

function loadProblems(tools: readonly ToolContract[]): readonly string[] {
  try {
    Catalog.load(tools);
  } catch (error) {
    if (error instanceof ContractError && error.code === 'CATALOG_INVALID') return error.problems;
    throw error;
  }
  return expect.fail('the catalog loaded');
}

const catalog = customerSupportCatalog();
// Parsed as the policy service parses it: the schema, every tool in the catalog, no write under a read-only role.
const roles = loadRoles(ROLES_FILE, catalog);

describe('the catalog snapshot', () => {
  it('is exactly what the current catalog and roles produce', () => {
    const current = snapshotJson(snapshotByRole(catalog, toolLists(roles)));
    expect(current, 'run node scripts/catalog-snapshot.mjs and review the diff').toBe(readFileSync(SNAPSHOT_FILE, 'utf8'));
  });

  it('gives no read-only role a write', () => {
    expect(readOnlyViolations(snapshotByRole(catalog, toolLists(roles)), readOnlyFlags(roles))).toEqual([]);
  });

  it('fails the read-only check when a write is added to support-readonly', () => {
    const readonly = roles['support-readonly'];
    if (readonly === undefined) return expect.fail('config/roles.json has no support-readonly role');
    const widened = { ...toolLists(roles), 'support-readonly': [...readonly.tools, 'commit_address_change.v2'] };
    expect(readOnlyViolations(snapshotByRole(catalog, widened), readOnlyFlags(roles))).toEqual([
      'role support-readonly is read-only but can call the write commit_address_change.v2',
    ]);
  });
});

describe('the roles file', () => {
  it('lists no write tool under a read-only role', () => {
    const readOnlyRoles = Object.entries(roles).filter(([, role]) => role.readOnly);
    expect(readOnlyRoles.map(([name]) => name)).toEqual(['support-readonly']);
    const writes = readOnlyRoles.flatMap(([name, role]) =>
      role.tools.filter((address) => catalog.get(address)?.effect !== 'read').map((address) => `${name}: ${address}`),
    );
    expect(writes).toEqual([]);
  });
});

describe('the reference catalog', () => {
  const writes = catalog.tools().filter((tool) => tool.effect === 'write');
  const commits = catalog.tools().filter((tool) => tool.previewedBy !== undefined);

  it('refuses to load with a write tool that names no approval rule, naming the tool', () => {
    const refund = defineTool({
      name: 'refund_order',
      version: 1,
      description: 'Refund an order to the original payment method.',
      input: {
        type: 'object',
        additionalProperties: false,
        required: ['proposal_id'],
        properties: { proposal_id: { type: 'string' } },
      },
      output: { type: 'object', additionalProperties: false, required: ['refund_id'], properties: { refund_id: { type: 'string' } } },
      effect: 'write',
      retry: 'idempotent',
      timeoutMs: 5_000,
      cancel: 'none',
      maxResultBytes: 1_024,
    });
    expect(loadProblems([...catalog.tools(), refund])).toEqual([expect.stringMatching(/^refund_order\.v1 \/approval: /)]);
  });

  it('gives every write an approval rule and a retry class other than safe', () => {
    expect(writes.map((tool) => tool.address)).toEqual([
      'cancel_operation.v1',
      'commit_address_change.v1',
      'commit_address_change.v2',
      'send_customer_email.v1',
      'start_customer_export.v1',
    ]);
    const unsound = writes
      .filter((tool) => typeof tool.approval !== 'string' || tool.approval.trim() === '' || tool.retry === 'safe')
      .map((tool) => `${tool.address}: approval ${String(tool.approval)}, retry ${tool.retry}`);
    expect(unsound).toEqual([]);
  });

  it('makes every commit tool take exactly {proposal_id}', () => {
    expect(commits.map((tool) => tool.address)).toEqual(['commit_address_change.v2', 'send_customer_email.v1']);
    for (const tool of commits) {
      expect(tool.input, tool.address).toEqual({
        type: 'object',
        additionalProperties: false,
        required: ['proposal_id'],
        properties: { proposal_id: expect.objectContaining({ type: 'string' }) as unknown },
      });
    }
  });
});
