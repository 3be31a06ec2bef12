import { describe, expect, expectTypeOf, it } from 'vitest';
import { Catalog, commitInputSchema, definePreviewCommit, implement } from '@gatehouse/sdk';
import type { ExecutionContext, PreviewResultOf, ProposalArgs, ProposalDraft, RunArgs, ToolArgs, ToolImplementation } from '@gatehouse/sdk';
import { getBalance, ledgerHandlers, ledgerTools, transfer } from './fixtures.js';

/** Exact type equality, cheap enough for json-schema-to-ts types (expectTypeOf's deep compare is not). */
type Same<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;

type Transfer = {
  from: string;
  to: string;
  amount: { minor: number; currency: string };
  expected_version: number;
};

const context: ExecutionContext = {
  signal: AbortSignal.abort(),
  commandId: 'cmd-1',
  operationId: 'op-1',
  runId: 'run-1',
  tenant: 't1',
  principal: 'alice',
  environment: 'test',
  idempotencyKey: 'run-1:p_1:commit',
  deadlineAt: null,
  credential: () => Promise.resolve('unused'),
};

describe('definePreviewCommit', () => {
  it('makes the preview a read that commits the commit, and the commit a write previewed by the preview', () => {
    expect(transfer.preview).toMatchObject({ address: 'preview_transfer.v1', effect: 'read', commits: 'commit_transfer.v1' });
    expect(transfer.commit).toMatchObject({
      address: 'commit_transfer.v1',
      effect: 'write',
      previewedBy: 'preview_transfer.v1',
      approval: 'transfer',
    });
    expect(transfer.preview.proposal).toBeUndefined();
  });

  it('gives the commit exactly {proposal_id} as input and the proposal schema as its proposal', () => {
    expect(transfer.commit.input).toEqual(commitInputSchema);
    expect(transfer.commit.proposal).toEqual(expect.objectContaining({ required: ['from', 'to', 'amount', 'expected_version'] }));
  });

  it('returns deeply frozen contracts that load into a catalog', () => {
    expect(Object.isFrozen(transfer.commit)).toBe(true);
    expect(Object.isFrozen(transfer.commit.proposal)).toBe(true);
    const catalog = Catalog.load([getBalance, transfer.preview, transfer.commit]);
    expect(catalog.tools().map((t) => t.address)).toEqual(['commit_transfer.v1', 'get_balance.v1', 'preview_transfer.v1']);
  });

  it('checks proposal arguments against the proposal schema in the catalog', () => {
    const catalog = Catalog.load([transfer.preview, transfer.commit]);
    const good = { from: 'A-1', to: 'A-2', amount: { minor: 500, currency: 'EUR' }, expected_version: 3 };
    const checked = catalog.validateProposal(transfer.commit, good);
    expect(checked).toEqual({ ok: true, value: good });
    if (checked.ok) expectTypeOf(checked.value).toEqualTypeOf<Transfer>();
    const bad = catalog.validateProposal(transfer.commit, { ...good, amount: { minor: 0, currency: 'EUR' } });
    expect(bad.ok ? undefined : bad.error).toMatchObject({ code: 'OUTPUT_INVALID', field: '/amount/minor', retryable: false });
  });

  it('hands the commit the arguments the preview proposed', async () => {
    const ledger = { url: 'http://ledger', transfers: [] };
    const { preview, commit } = ledgerHandlers(ledger);
    if (preview.propose === undefined) return expect.fail('the preview does not propose');
    const args = { from: 'A-1', to: 'A-2', amount: { minor: 500, currency: 'EUR' } };
    const draft = preview.propose(args, await preview.run(args, context), context);
    expect(draft.arguments).toEqual({ ...args, expected_version: 7 });
    expect(await commit.run(draft.arguments, context)).toEqual({ transfer_id: 't-1' });
    expect(commit.resourceOf?.(draft.arguments)).toBe('account:A-1');
    expect(ledger.transfers).toEqual([{ from: 'A-1', to: 'A-2', minor: 500 }]);
  });
});

describe('the types of a preview/commit pair', () => {
  it('types the proposal arguments of both sides from the proposal schema', () => {
    expectTypeOf<ProposalArgs<typeof transfer.commit>>().toEqualTypeOf<Transfer>();
    expectTypeOf<ProposalArgs<typeof transfer.preview>>().toEqualTypeOf<Transfer>();
    expectTypeOf<RunArgs<typeof transfer.commit>>().toEqualTypeOf<Transfer>();
    expectTypeOf<ToolArgs<typeof transfer.commit>>().toEqualTypeOf<{ proposal_id: string }>();
    expectTypeOf<RunArgs<typeof getBalance>>().toEqualTypeOf<ToolArgs<typeof getBalance>>();
  });

  it('types the preview result as the output view without the fields Gatehouse adds', () => {
    expectTypeOf<PreviewResultOf<typeof transfer.preview>['version']>().toEqualTypeOf<number>();
    expectTypeOf<keyof PreviewResultOf<typeof transfer.preview>>().toEqualTypeOf<'version' | 'fee'>();
    expectTypeOf<
      Same<PreviewResultOf<typeof transfer.preview>, { version: number; fee: { minor: number; currency: string } }>
    >().toEqualTypeOf<true>();
  });

  it('types propose by the preview arguments and result and its draft by the proposal schema', () => {
    const preview = implement(transfer.preview, {
      run: () => Promise.resolve({ version: 1, fee: { minor: 1, currency: 'EUR' } }),
      propose: (args, result) => {
        expectTypeOf(args).toEqualTypeOf<ToolArgs<typeof transfer.preview>>();
        expectTypeOf<Same<typeof result, { version: number; fee: { minor: number; currency: string } }>>().toEqualTypeOf<true>();
        return {
          arguments: { ...args, expected_version: result.version },
          target: { type: 'account', id: args.from, version: null },
          effect: 'Move money.',
          diff: { changes: [], recipients: [], amount: null, affectedRecords: 1, irreversible: [] },
        };
      },
    });
    expectTypeOf<ReturnType<NonNullable<(typeof preview)['propose']>>>().toEqualTypeOf<ProposalDraft<Transfer>>();
    expect(preview.contract).toBe(transfer.preview);
  });

  it('types the commit handler and its resource by the proposal arguments', () => {
    const commit = implement(transfer.commit, {
      run: (args) => {
        expectTypeOf(args).toEqualTypeOf<Transfer>();
        return Promise.resolve({ transfer_id: args.from });
      },
      resourceOf: (args) => `account:${args.to}`,
    });
    expectTypeOf<(typeof commit)['resourceOf']>().toEqualTypeOf<((args: Transfer) => string) | undefined>();
    expect(commit.contract).toBe(transfer.commit);
  });

  it('refuses to compile handlers whose arguments or results do not match the schemas', () => {
    implement(transfer.commit, {
      run: (args) => {
        // @ts-expect-error the commit runs with the proposal arguments, which carry no proposal_id
        void args.proposal_id;
        return Promise.resolve({ transfer_id: 't' });
      },
    });
    implement(transfer.commit, {
      run: () => Promise.resolve({ transfer_id: 't' }),
      // @ts-expect-error the resource is computed from the proposal arguments, not from the commit input
      resourceOf: (args: { proposal_id: string }) => args.proposal_id,
    });
    implement(transfer.preview, {
      // @ts-expect-error the preview result must carry `fee`
      run: () => Promise.resolve({ version: 1 }),
      propose: (args, result) => ({
        arguments: { ...args, expected_version: result.version },
        target: { type: 'account', id: args.from, version: null },
        effect: 'Move money.',
        diff: { changes: [], recipients: [], amount: null, affectedRecords: 1, irreversible: [] },
      }),
    });
    implement(transfer.preview, {
      run: () => Promise.resolve({ version: 1, fee: { minor: 1, currency: 'EUR' } }),
      propose: (args, result) => ({
        // @ts-expect-error the draft must carry expected_version, which the proposal schema requires
        arguments: { from: args.from, to: args.to, amount: args.amount },
        target: { type: 'account', id: args.from, version: result.version },
        effect: 'Move money.',
        diff: { changes: [], recipients: [], amount: null, affectedRecords: 1, irreversible: [] },
      }),
    });
    implement(transfer.preview, {
      run: () => Promise.resolve({ version: 1, fee: { minor: 1, currency: 'EUR' } }),
      propose: (args, result) => {
        // @ts-expect-error `proposal_id` is added by Gatehouse, never part of the result propose reads
        void result.proposal_id;
        return {
          arguments: { ...args, expected_version: result.version },
          target: { type: 'account', id: args.from, version: null },
          effect: 'Move money.',
          diff: { changes: [], recipients: [], amount: null, affectedRecords: 1, irreversible: [] },
        };
      },
    });
    // @ts-expect-error the preview of a typed pair must propose
    implement(transfer.preview, { run: () => Promise.resolve({ version: 1, fee: { minor: 1, currency: 'EUR' } }) });
    expect(true).toBe(true);
  });

  it('lets implementations of every kind share one list', () => {
    const list: readonly ToolImplementation[] = ledgerTools({ url: 'http://ledger', transfers: [] });
    expect(list.map((i) => i.contract.address)).toEqual(['get_balance.v1', 'preview_transfer.v1', 'commit_transfer.v1']);
  });

  it('declares a pair whose proposal schema is open, for the catalog to refuse', () => {
    const closed = { type: 'object', additionalProperties: false, properties: {} } as const;
    const common = {
      version: 1,
      description: 'A probe.',
      output: closed,
      timeoutMs: 1_000,
      cancel: 'none',
      maxResultBytes: 1_024,
    } as const;
    const open = definePreviewCommit({
      proposal: { type: 'object', properties: { x: { type: 'string' } } },
      preview: { ...common, name: 'preview_open', input: closed, retry: 'safe' },
      commit: { ...common, name: 'commit_open', retry: 'never', approval: 'open' },
    });
    expect(() => Catalog.load([open.preview, open.commit])).toThrow(/commit_open\.v1 \/proposal: object schema is open/);
  });
});
