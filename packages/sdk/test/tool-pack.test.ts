import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { defineToolPack, describePack, isToolPack, PackError, readPackConfig, TOOL_PACK_KIND, toolsOf, validatePack } from '@gatehouse/sdk';
import type { PackConfig, ToolImplementation, ToolPack } from '@gatehouse/sdk';
import { bankPack, ledgerHandlers, ledgerTools, ROLES, TABLE, transfer } from './fixtures.js';

const ENV = { LEDGER_TOKEN: 'secret-token' };
const ledger = { url: 'http://ledger', transfers: [] };

function problemsOf(run: () => unknown): { code: string; problems: readonly string[] } {
  try {
    run();
  } catch (error) {
    if (error instanceof PackError) return { code: error.code, problems: error.problems };
    throw error;
  }
  return expect.fail('the pack was accepted');
}

/** The bank pack with some fields replaced, as a pack author might get them wrong. */
const variant = (overrides: Partial<ToolPack>): ToolPack => ({ ...bankPack, ...overrides });

describe('defineToolPack', () => {
  it('returns a frozen pack a loader recognises by its shape', () => {
    expect(Object.isFrozen(bankPack)).toBe(true);
    expect(bankPack.kind).toBe(TOOL_PACK_KIND);
    expect(isToolPack(bankPack)).toBe(true);
    expect(isToolPack({ ...bankPack })).toBe(true);
  });

  it('does not take an object without the pack mark or with a missing part for a pack', () => {
    expect(isToolPack({ ...bankPack, kind: 'something-else' })).toBe(false);
    expect(isToolPack({ ...bankPack, tools: [] })).toBe(false);
    expect(isToolPack({ ...bankPack, roles: 'config/roles.json' })).toBe(false);
    expect(isToolPack(null)).toBe(false);
  });

  it('types the configuration setup receives from the config spec', () => {
    expectTypeOf<PackConfig<typeof bankPack.config>>().toEqualTypeOf<{
      readonly LEDGER_URL: string;
      readonly LEDGER_TIMEOUT_MS: number;
      readonly LEDGER_TOKEN: string;
      readonly LEDGER_REGION: string | undefined;
    }>();
    defineToolPack({
      name: 'typed',
      config: { PORT: { doc: 'A port.', default: '80', parse: Number } },
      roles: new URL('file:///roles.json'),
      policyTable: new URL('file:///table.json'),
      setup: (config) => {
        // @ts-expect-error PORT is parsed to a number
        const port: string = config.PORT;
        return { port };
      },
      tools: (deps) => {
        expectTypeOf(deps).toEqualTypeOf<{ port: string }>();
        return [];
      },
    });
  });

  it('infers what an async setup resolves to as the deps of tools', () => {
    const pack = defineToolPack({
      name: 'async-setup',
      config: {},
      roles: new URL('file:///roles.json'),
      policyTable: new URL('file:///table.json'),
      setup: () => Promise.resolve({ ledger }),
      tools: (deps): readonly ToolImplementation[] => ledgerTools(deps.ledger),
    });
    expectTypeOf<Parameters<(typeof pack)['tools']>[0]>().toEqualTypeOf<{ ledger: typeof ledger }>();
    expect(pack.name).toBe('async-setup');
  });
});

describe('readPackConfig', () => {
  it('parses set values and takes the defaults of unset or empty ones', () => {
    expect(readPackConfig(bankPack, { ...ENV, LEDGER_URL: '', LEDGER_TIMEOUT_MS: '500' })).toEqual({
      LEDGER_URL: 'http://127.0.0.1:9000',
      LEDGER_TIMEOUT_MS: 500,
      LEDGER_TOKEN: 'secret-token',
      LEDGER_REGION: undefined,
    });
  });

  it('refuses a missing required variable and a value its parse refuses, naming each, without echoing a secret', () => {
    const refused = problemsOf(() => readPackConfig(bankPack, { LEDGER_TIMEOUT_MS: 'soon' }));
    expect(refused).toEqual({
      code: 'PACK_CONFIG_INVALID',
      problems: [
        'LEDGER_TIMEOUT_MS: must be a whole number of milliseconds, got "soon"',
        'LEDGER_TOKEN: required: Bearer token for the ledger.',
      ],
    });
    const refuse = (): never => {
      throw new Error('is malformed');
    };
    const secret = { name: 'secretive', config: { TOKEN: { doc: 'A token.', secret: true, parse: refuse } } };
    expect(problemsOf(() => readPackConfig(secret, { TOKEN: 'hunter2' })).problems).toEqual(['TOKEN: is malformed']);
    // A parser that quotes what it refused does not get a secret into the refusal either.
    const quoting = {
      name: 'quoting',
      config: {
        TOKEN: {
          doc: 'A token.',
          secret: true,
          parse: (raw: string): never => {
            throw new Error(`"${raw}" is not a token`);
          },
        },
      },
    };
    const quoted = problemsOf(() => readPackConfig(quoting, { TOKEN: 'hunter2' })).problems;
    expect(quoted).toEqual(['TOKEN: "(the value)" is not a token']);
    expect(quoted.join(' ')).not.toContain('hunter2');
  });

  it('reads a secret from the file NAME_FILE names, as Kubernetes mounts secrets, and refuses both set or an unreadable file without the value', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-secret-'));
    try {
      const file = join(dir, 'ledger-token');
      writeFileSync(file, 'token-from-a-file\n');
      expect(readPackConfig(bankPack, { LEDGER_TOKEN_FILE: file }).LEDGER_TOKEN).toBe('token-from-a-file');
      // Only a secret is read from a file: another variable's NAME_FILE is not its value.
      expect(readPackConfig(bankPack, { ...ENV, LEDGER_URL_FILE: file }).LEDGER_URL).toBe('http://127.0.0.1:9000');
      const both = problemsOf(() => readPackConfig(bankPack, { LEDGER_TOKEN: 'secret-token', LEDGER_TOKEN_FILE: file })).problems;
      expect(both).toEqual(['LEDGER_TOKEN: set either LEDGER_TOKEN or LEDGER_TOKEN_FILE, not both']);
      const missing = problemsOf(() => readPackConfig(bankPack, { LEDGER_TOKEN_FILE: join(dir, 'absent') })).problems;
      expect(missing).toEqual([
        `LEDGER_TOKEN: LEDGER_TOKEN_FILE names ${JSON.stringify(join(dir, 'absent'))}, which cannot be read (ENOENT)`,
      ]);
      const refuse = (): never => {
        throw new Error('is malformed');
      };
      const secret = { name: 'secretive', config: { TOKEN: { doc: 'A token.', secret: true, parse: refuse } } };
      const refused = problemsOf(() => readPackConfig(secret, { TOKEN_FILE: file })).problems;
      expect(refused).toEqual(['TOKEN: is malformed']);
      expect(refused.join(' ')).not.toContain('token-from-a-file');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('describePack', () => {
  it('describes the pack: its variables and the documents it ships', () => {
    expect(describePack(bankPack)).toEqual({
      name: 'bank',
      variables: [
        { name: 'LEDGER_URL', doc: 'Base URL of the ledger.', default: 'http://127.0.0.1:9000/', required: false, secret: false },
        { name: 'LEDGER_TIMEOUT_MS', doc: 'How long a ledger call may take.', default: '2000', required: false, secret: false },
        { name: 'LEDGER_TOKEN', doc: 'Bearer token for the ledger.', default: null, required: true, secret: true },
        { name: 'LEDGER_REGION', doc: 'Region hint; none when unset.', default: null, required: false, secret: false },
      ],
      roles: bankPack.roles.href,
      policyTable: bankPack.policyTable.href,
      approvers: null,
      approverPolicy: null,
    });
  });

  it('refuses variables under the reserved prefixes, malformed names and defaults its parse refuses', () => {
    const config = {
      GATEHOUSE_LEDGER: { doc: 'Mine, not Gatehouse’s.' },
      APPROVALS_URL: { doc: 'Also reserved.' },
      ledger_url: { doc: 'Lower case.' },
      LEDGER_RETRIES: {
        doc: '',
        default: 'many',
        parse: (raw: string) => {
          if (!/^\d+$/.test(raw)) throw new Error('must be a number');
          return Number(raw);
        },
      },
      LEDGER_KEY: { doc: 'A key.', required: true, default: 'k' },
    };
    expect(problemsOf(() => describePack(variant({ config })))).toEqual({
      code: 'PACK_INVALID',
      problems: [
        "config GATEHOUSE_LEDGER: the prefix GATEHOUSE_ is reserved for Gatehouse's own variables",
        "config APPROVALS_URL: the prefix APPROVALS_ is reserved for Gatehouse's own variables",
        'config ledger_url: a variable name matches ^[A-Z][A-Z0-9_]*$',
        'config LEDGER_RETRIES: doc must say what the variable is for',
        'config LEDGER_RETRIES: the default "many" is refused: must be a number',
        'config LEDGER_KEY: a required variable has no default',
      ],
    });
  });

  it('refuses a malformed name and documents that are not file URLs', () => {
    const broken = variant({
      name: 'Bank Pack',
      roles: new URL('https://example.com/roles.json'),
      approvers: new URL('http://x/approvers.json'),
    });
    expect(problemsOf(() => describePack(broken)).problems).toEqual([
      'name: must match ^[a-z][a-z0-9]*(-[a-z0-9]+)*$',
      'roles: must be a file: URL of the document',
      'approvers: must be a file: URL of the document',
    ]);
  });
});

describe('validatePack', () => {
  const contents = { tools: ledgerTools(ledger), roles: ROLES, policyTable: TABLE };

  it('returns the catalog, roles and table of a sound pack', () => {
    const valid = validatePack(bankPack, contents);
    expect(valid.name).toBe('bank');
    expect(valid.catalog.tools().map((t) => t.address)).toEqual(['commit_transfer.v1', 'get_balance.v1', 'preview_transfer.v1']);
    expect(Object.keys(valid.roles)).toEqual(['teller', 'auditor']);
    expect(valid.policyTable.rules.map((r) => r.id)).toEqual(['transfer-approved']);
    expect(valid.implementations).toBe(contents.tools);
  });

  it('refuses a credential without a usable audience, or with settings it does not know', () => {
    const { balance } = ledgerHandlers(ledger);
    const declared = (credential: unknown): ToolImplementation => ({ ...balance, credential }) as ToolImplementation;
    expect(
      validatePack(bankPack, { ...contents, tools: [declared({ audience: 'ledger' }), ...contents.tools.slice(1)] }).implementations[0]
        ?.credential,
    ).toEqual({ audience: 'ledger' });
    expect(
      problemsOf(() => validatePack(bankPack, { ...contents, tools: [declared({ audience: 'a ledger' }), ...contents.tools.slice(1)] }))
        .problems,
    ).toEqual(['tool get_balance.v1: credential.audience must be 1..255 printable ASCII characters without spaces']);
    expect(
      problemsOf(() =>
        validatePack(bankPack, { ...contents, tools: [declared({ audience: 'ledger', ttl: 5 }), ...contents.tools.slice(1)] }),
      ).problems,
    ).toEqual(['tool get_balance.v1: credential.ttl is not a credential setting (only audience, or exchange)']);
    expect(
      problemsOf(() =>
        validatePack(bankPack, { ...contents, tools: [declared({ audience: 'ledger', exchange: true }), ...contents.tools.slice(1)] }),
      ).problems,
    ).toEqual(['tool get_balance.v1: credential must be { audience } or { exchange: { audience, scope? } }']);
  });

  it('takes a token-exchange credential with an audience and scopes, and refuses a malformed one', () => {
    const { balance } = ledgerHandlers(ledger);
    const declared = (credential: unknown): ToolImplementation => ({ ...balance, credential }) as ToolImplementation;
    const exchange = { exchange: { audience: 'ledger-service', scope: 'ledger.read ledger.audit' } };
    expect(
      validatePack(bankPack, { ...contents, tools: [declared(exchange), ...contents.tools.slice(1)] }).implementations[0]?.credential,
    ).toEqual(exchange);
    expect(
      problemsOf(() =>
        validatePack(bankPack, {
          ...contents,
          tools: [declared({ exchange: { audience: '', scope: 'a  b', ttl: 1 }, audience: 'x' }), ...contents.tools.slice(1)],
        }),
      ).problems,
    ).toEqual([
      'tool get_balance.v1: credential.exchange.audience must be 1..255 printable ASCII characters without spaces',
      'tool get_balance.v1: credential.exchange.scope must be space-separated scope names',
      'tool get_balance.v1: credential.exchange.ttl is not an exchange setting (audience, scope)',
      'tool get_balance.v1: credential.audience does not go with exchange',
    ]);
  });

  it("gives every tool without a credential of its own the pack's, as a service hosts them", () => {
    const withPack = defineToolPack({ ...bankPack, credential: (deps) => ({ audience: `ledger@${deps.url}` }) });
    const tools = toolsOf(withPack, { url: 'http://ledger', transfers: [] });
    expect(tools.map((t) => t.credential)).toEqual([
      { audience: 'ledger@http://ledger' },
      { audience: 'ledger@http://ledger' },
      { audience: 'ledger@http://ledger' },
    ]);
    const own = defineToolPack({ ...withPack, tools: (deps) => [{ ...ledgerHandlers(deps).balance, credential: { audience: 'own' } }] });
    expect(toolsOf(own, { url: 'x', transfers: [] }).map((t) => t.credential)).toEqual([{ audience: 'own' }]);
  });

  it('refuses a tool implemented twice, naming it', () => {
    const { balance } = ledgerHandlers(ledger);
    expect(problemsOf(() => validatePack(bankPack, { ...contents, tools: [...contents.tools, balance] })).problems).toEqual([
      'tool get_balance.v1: is implemented twice',
    ]);
  });

  it('refuses a pair missing its commit and a preview that does not propose', () => {
    const { balance } = ledgerHandlers(ledger);
    const silent: ToolImplementation = {
      contract: transfer.preview,
      run: () => Promise.resolve({ version: 1, fee: { minor: 1, currency: 'EUR' } }),
    };
    const { problems } = problemsOf(() => validatePack(bankPack, { ...contents, tools: [balance, silent] }));
    expect(problems).toEqual([
      'tool preview_transfer.v1: a preview (commits commit_transfer.v1) must propose',
      'tool preview_transfer.v1 /commits: references commit_transfer.v1, which is not in the catalog',
    ]);
  });

  it('refuses roles that name tools the pack does not have and a read-only role with a write', () => {
    const roles = {
      roles: {
        ...ROLES.roles,
        auditor: { description: 'Reads balances.', readOnly: true, tools: ['get_balance.v1', 'commit_transfer.v1', 'close_account.v1'] },
      },
    };
    const { problems } = problemsOf(() => validatePack(bankPack, { ...contents, roles }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^roles: /);
    expect(problems[0]).toContain('role auditor is read-only but lists the write tool commit_transfer.v1');
    expect(problems[0]).toContain('role auditor: close_account.v1 is not in the catalog');
  });

  it('refuses a policy table that names an approval rule no tool declares or a tool the pack does not have', () => {
    const rule = TABLE.rules[0];
    const table = {
      rules: [
        { ...rule, match: { effect: 'write', approvalRules: ['refund'] } },
        { ...rule, id: 'close', match: { tools: ['close_account.v1'] } },
      ],
    };
    const { problems } = problemsOf(() => validatePack(bankPack, { ...contents, policyTable: table }));
    expect(problems).toEqual([
      'policyTable: policy table is invalid: rule transfer-approved names approval rule refund, which no tool declares; rule close names unknown tool close_account.v1',
    ]);
  });

  it('lists the problems of every part at once, shape included', () => {
    const { problems } = problemsOf(() => validatePack(variant({ name: 'x y' }), { tools: contents.tools, roles: {}, policyTable: {} }));
    expect(problems.map((p) => p.split(':')[0])).toEqual(['name', 'roles', 'policyTable']);
  });
});
