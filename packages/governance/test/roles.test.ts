import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRoles, parseRoles, rolesGranting } from '@gatehouse/governance';
import { catalog } from './fixtures.js';

const DOCUMENT = {
  $schema: './roles.schema.json',
  roles: {
    viewer: { description: 'Looks things up.', readOnly: true, tools: ['lookup_account.v2', 'preview_transfer.v1'] },
    agent: { description: 'Proposes transfers.', readOnly: false, tools: ['lookup_account.v2', 'commit_transfer.v1'] },
    ops: { description: 'Everything.', readOnly: false, tools: ['commit_transfer.v1', 'start_export.v1'] },
  },
};

const problemsOf = (document: unknown): string => {
  try {
    parseRoles(document, catalog);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  return expect.fail('the roles parsed');
};

describe('parsing a roles document', () => {
  it('returns each role with its description, read-only flag and tools', () => {
    expect(parseRoles(structuredClone(DOCUMENT), catalog)).toEqual(DOCUMENT.roles);
  });

  it('refuses a document outside the schema, listing every problem', () => {
    const message = problemsOf({
      roles: {
        'Bad Name': { description: 'x', readOnly: false, tools: [] },
        agent: { description: '', readOnly: 'no', tools: ['x', 'x'], extra: 1 },
      },
    });
    expect(message).toMatch(/^roles file is invalid: /);
    for (const part of [
      'must match pattern "^[a-z][a-z0-9-]*$"',
      '/roles/agent/description',
      '/roles/agent/readOnly',
      '/roles/agent/tools/0',
      'must NOT have additional properties',
    ]) {
      expect(message).toContain(part);
    }
  });

  it('refuses a document with no roles, or with keys it does not know', () => {
    expect(problemsOf({ roles: {} })).toContain('must NOT have fewer than 1 properties');
    expect(problemsOf({ roles: DOCUMENT.roles, owner: 'x' })).toContain('must NOT have additional properties');
    expect(problemsOf([])).toMatch(/roles file is invalid/);
  });

  it('refuses tools that are not in the catalog and writes under a read-only role, naming each', () => {
    const message = problemsOf({
      roles: { viewer: { description: 'x', readOnly: true, tools: ['lookup_account.v7', 'start_export.v1', 'lookup_account.v1'] } },
    });
    expect(message).toBe(
      'roles file is invalid: role viewer: lookup_account.v7 is not in the catalog; role viewer is read-only but lists the write tool start_export.v1',
    );
  });

  it('reads a roles file from disk', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'gatehouse-roles-')), 'roles.json');
    writeFileSync(file, JSON.stringify(DOCUMENT));
    expect(Object.keys(loadRoles(file, catalog))).toEqual(['viewer', 'agent', 'ops']);
  });
});

describe('the roles granting a tool', () => {
  const granting = rolesGranting(parseRoles(structuredClone(DOCUMENT), catalog));

  it('lists every role that has the tool, in the document’s order', () => {
    expect(granting('commit_transfer.v1')).toEqual(['agent', 'ops']);
    expect(granting('lookup_account.v2')).toEqual(['viewer', 'agent']);
  });

  it('lists none for a tool no role has, and answers lists nobody can change', () => {
    expect(granting('send_notice.v1')).toEqual([]);
    expect(Object.isFrozen(granting('commit_transfer.v1'))).toBe(true);
    expect(Object.isFrozen(granting('nope.v1'))).toBe(true);
  });
});
