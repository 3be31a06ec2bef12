// The JSON Schemas published for a pack's documents (packages/sdk/schemas/): the very schemas the
// services validate with, usable by any JSON Schema 2020-12 validator (as an editor's), and true of
// the example packs' documents.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../../', import.meta.url);
const readJson = (path: string): unknown => JSON.parse(readFileSync(new URL(path, ROOT), 'utf8'));
const PACKS = ['examples/customer-support/pack', 'examples/refunds/pack'];

function validatorOf(file: string): (document: unknown) => string[] {
  const validate = new Ajv2020({ allErrors: true, strict: false }).compile(readJson(`packages/sdk/schemas/${file}`) as object);
  return (document) => (validate(document) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`));
}

describe('the published document schemas', () => {
  it("are what scripts/document-schemas.mjs writes from the services' own schemas", () => {
    expect(() => execFileSync(process.execPath, ['scripts/document-schemas.mjs', '--check'], { cwd: ROOT, stdio: 'pipe' })).not.toThrow();
  });

  it("accept every example pack's roles, policy table, approvers and approver policy", () => {
    for (const [file, document] of [
      ['roles.schema.json', 'roles.json'],
      ['policy-table.schema.json', 'policy-table.json'],
      ['approvers.schema.json', 'approvers.json'],
      ['approver-policy.schema.json', 'approver-policy.json'],
    ] as const) {
      const check = validatorOf(file);
      for (const pack of PACKS) expect(check(readJson(`${pack}/config/${document}`)), `${pack}/config/${document}`).toEqual([]);
    }
  });

  it('refuse what the guide says is refused: an approver without a tenant, an unknown match key, a role with no tools list, no grant', () => {
    const approvers = validatorOf('approvers.schema.json')({
      approvers: [{ identity: 'a@x', token_sha256: 'a'.repeat(64), roles: ['lead'], tenants: [] }],
    });
    expect(approvers).toEqual(['/approvers/0/tenants must NOT have fewer than 1 items']);
    const table = validatorOf('policy-table.schema.json')({
      rules: [{ id: 'r', description: 'd', match: { tool: 'x.v1' }, decision: { kind: 'allow' } }],
    });
    expect(table).toContain('/rules/0/match must NOT have additional properties');
    expect(validatorOf('roles.schema.json')({ roles: { reader: { description: 'd', readOnly: true } } })).toEqual([
      "/roles/reader must have required property 'tools'",
    ]);
    expect(validatorOf('approver-policy.schema.json')({ grants: [] })).toEqual(['/grants must NOT have fewer than 1 items']);
  });
});
