import { describe, expect, it } from 'vitest';
import { canonicalArguments } from '@gatehouse/contracts';
import type { ErrorCode, ToolError } from '@gatehouse/contracts';
import { BOUNDARY_STAGES, checkCall, idempotencyKeyOf, stageOfRefusal } from '@gatehouse/governance';
import type { BoundaryStage, CallVerdict } from '@gatehouse/governance';
import { command, depsOf, NOW, proposal, run, world } from './fixtures.js';
import type { World } from './fixtures.js';

const OVERSIZED = 'x'.repeat(300); // over the fixtures' 256-byte limit, and not JSON

interface RefusalCase {
  readonly stage: BoundaryStage;
  /** The call, which also fails every later check it can. */
  readonly why: string;
  readonly call: ReturnType<typeof command>;
  readonly setup?: (w: World) => void;
  readonly expected: Partial<ToolError> & { readonly code: ErrorCode };
  /** Refused once the arguments had a canonical form, so the refusal carries their hash. */
  readonly hashed: boolean;
}

const withRun = (overrides: Parameters<typeof run>[0]) => (w: World) => w.runs.set('run_1', run(overrides));
const storeProposal =
  (overrides: Parameters<typeof proposal>[0], state: 'open' | 'consumed' = 'open') =>
  (w: World) =>
    w.proposals.set('p_1', { proposal: proposal(overrides), state });
const refusedRate = (w: World) => (w.rate = { allowed: false, retryAfterMs: 1_000 });
const commitP1 = command('commit_transfer.v1', { proposal_id: 'p_1' });

// One row per way to fail, in the boundary's order: each row is refused by its stage although it
// would fail later ones too, which is what "first failure wins" means.
const CASES: readonly RefusalCase[] = [
  {
    stage: 'run',
    why: 'an unregistered run, with a foreign tenant, an unknown tool and oversized arguments',
    call: command('nope.v1', null, { run_id: 'run_x', tenant: 'other', raw: OVERSIZED }),
    expected: { code: 'RUN_NOT_FOUND', message: 'Run run_x is not registered' },
    hashed: false,
  },
  {
    stage: 'run',
    why: 'a stopped run',
    call: command('nope.v1', null, { tenant: 'other' }),
    setup: withRun({ stopped_at: NOW - 1 }),
    expected: { code: 'RUN_NOT_FOUND', message: 'Run run_1 was stopped' },
    hashed: false,
  },
  {
    stage: 'run',
    why: 'a run that expires at this very moment',
    call: command('nope.v1', null, { tenant: 'other' }),
    setup: withRun({ expires_at: NOW }),
    expected: { code: 'RUN_NOT_FOUND', message: 'Run run_1 has expired' },
    hashed: false,
  },
  {
    stage: 'tenant',
    why: 'a command naming another tenant, an unknown tool and oversized arguments',
    call: command('nope.v1', null, { tenant: 'other', raw: OVERSIZED }),
    expected: { code: 'TENANT_MISMATCH' },
    hashed: false,
  },
  {
    stage: 'lookup',
    why: 'an unknown tool with oversized arguments',
    call: command('nope.v1', null, { raw: OVERSIZED }),
    expected: { code: 'TOOL_NOT_FOUND', permitted: run().capabilities },
    hashed: false,
  },
  {
    stage: 'lookup',
    why: 'an unknown version of a known tool',
    call: command('lookup_account.v9', { account_id: 'A-1' }),
    expected: { code: 'TOOL_NOT_FOUND', next: 'lookup_account.v2' },
    hashed: false,
  },
  {
    stage: 'retired',
    why: 'a retired version the run was not granted, with oversized arguments',
    call: command('lookup_account.v1', null, { raw: OVERSIZED }),
    expected: { code: 'TOOL_VERSION_RETIRED', next: 'lookup_account.v2' },
    hashed: false,
  },
  {
    stage: 'capability',
    why: 'a live tool the run was not granted, with oversized arguments',
    call: command('lookup_account.v2', null, { raw: OVERSIZED }),
    setup: withRun({ capabilities: ['lookup_account.v1'] }),
    expected: { code: 'CAPABILITY_DENIED', permitted: ['lookup_account.v1'], next: 'lookup_account.v1' },
    hashed: false,
  },
  {
    stage: 'size',
    why: 'arguments over the byte limit that are not JSON either',
    call: command('lookup_account.v2', null, { raw: OVERSIZED }),
    expected: { code: 'PAYLOAD_TOO_LARGE', message: 'Arguments exceed 256 bytes' },
    hashed: false,
  },
  {
    stage: 'json',
    why: 'arguments that are not JSON, to a rate-limited tool out of calls',
    call: command('start_export.v1', null, { raw: '{"account_id":' }),
    setup: refusedRate,
    expected: { code: 'INVALID_ARGUMENT', message: 'Arguments are not a JSON document' },
    hashed: false,
  },
  {
    stage: 'schema',
    why: 'arguments outside the input schema, to a rate-limited tool out of calls',
    call: command('start_export.v1', { account_id: '' }),
    setup: refusedRate,
    expected: { code: 'INVALID_ARGUMENT', field: '/account_id' },
    hashed: true,
  },
  {
    stage: 'rate-limit',
    why: 'a rate-limited write out of calls',
    call: command('start_export.v1', { account_id: 'A-1' }),
    setup: refusedRate,
    expected: { code: 'RATE_LIMITED', retryAfterMs: 1_000, retryable: true },
    hashed: true,
  },
  {
    stage: 'rate-limit',
    why: 'a rate-limited write whose wait outlives the run',
    call: command('start_export.v1', { account_id: 'A-1' }),
    setup: (w) => {
      w.runs.set('run_1', run({ expires_at: NOW + 500 }));
      refusedRate(w);
    },
    expected: { code: 'RATE_LIMITED', retryAfterMs: 1_000, retryable: false },
    hashed: true,
  },
  {
    stage: 'proposal',
    why: 'a commit of a proposal that does not exist',
    call: command('commit_transfer.v1', { proposal_id: 'p_missing' }),
    expected: { code: 'PROPOSAL_NOT_FOUND', field: '/proposal_id', next: 'preview_transfer.v1' },
    hashed: true,
  },
  {
    stage: 'proposal',
    why: 'a commit of a proposal made for another tool',
    call: commitP1,
    setup: storeProposal({ tool: 'send_notice.v1' }),
    expected: { code: 'PROPOSAL_NOT_FOUND', field: '/proposal_id' },
    hashed: true,
  },
  {
    stage: 'proposal-run',
    why: 'a commit of another run’s proposal, used and expired',
    call: commitP1,
    setup: storeProposal({ run_id: 'run_2', expires_at: NOW }, 'consumed'),
    expected: { code: 'CAPABILITY_DENIED', field: '/proposal_id', permitted: run().capabilities },
    hashed: true,
  },
  {
    stage: 'proposal-run',
    why: 'a commit of another tenant’s proposal',
    call: commitP1,
    setup: storeProposal({ tenant: 'globex' }),
    expected: { code: 'CAPABILITY_DENIED', field: '/proposal_id' },
    hashed: true,
  },
  {
    stage: 'consumed',
    why: 'a commit of a used proposal with no idempotency record',
    call: commitP1,
    setup: storeProposal({}, 'consumed'),
    expected: { code: 'PROPOSAL_CONSUMED' },
    hashed: true,
  },
  {
    stage: 'expired',
    why: 'a commit of a proposal that expires at this very moment',
    call: commitP1,
    setup: storeProposal({ expires_at: NOW }),
    expected: { code: 'PROPOSAL_EXPIRED', next: 'preview_transfer.v1' },
    hashed: true,
  },
  {
    stage: 'policy',
    why: 'a write the policy table denies',
    call: command('send_notice.v1', { account_id: 'A-1', text: 'hello' }),
    expected: { code: 'POLICY_DENIED', message: 'Notices are sent by people (rule notice-deny)', next: 'a person' },
    hashed: true,
  },
];

async function verdictOf(call: ReturnType<typeof command>, setup?: (w: World) => void): Promise<{ verdict: CallVerdict; w: World }> {
  const w = world();
  setup?.(w);
  return { verdict: await checkCall(call, depsOf(w), NOW), w };
}

describe('the boundary’s ordered checks', () => {
  it.each(CASES)('refuses $why at the $stage stage with $expected.code', async ({ stage, call, setup, expected, hashed }) => {
    const { verdict } = await verdictOf(call, setup);
    if (verdict.kind !== 'refuse') return expect.fail(`routed as ${verdict.kind}`);
    expect(verdict.error).toMatchObject(expected);
    expect(verdict.argumentsSha256).toEqual(hashed ? expect.stringMatching(/^[0-9a-f]{64}$/) : null);
    expect(stageOfRefusal(verdict.error.code, verdict.error.field)).toBe(stage);
  });

  it('has a refusal case for every stage, in the order the stages run', () => {
    const stages = CASES.map((c) => c.stage).filter((stage, i, all) => all.indexOf(stage) === i);
    expect(stages).toEqual(BOUNDARY_STAGES);
  });

  it('asks the rate limiter once, for the tool, its scope and the command id, only after the schema passed', async () => {
    const refusedBySchema = await verdictOf(command('start_export.v1', { account_id: '' }));
    expect(refusedBySchema.w.takes).toEqual([]);
    const { w } = await verdictOf(command('start_export.v1', { account_id: 'A-1' }));
    expect(w.takes).toEqual([['start_export.v1', 'tenant:acme', { limit: 2, windowMs: 60_000, per: 'tenant' }, 'cmd_1']]);
  });

  it('says a read-only run cannot change state, and points to the preview or the roles that would serve', async () => {
    const readOnly = await verdictOf(command('start_export.v1', { account_id: 'A-1' }), withRun({ capabilities: ['lookup_account.v2'] }));
    expect(readOnly.verdict).toMatchObject({
      error: { code: 'CAPABILITY_DENIED', message: 'Run run_1 (role agent) is read-only; start_export.v1 changes state' },
    });
    const preview = await verdictOf(commitP1, withRun({ capabilities: ['preview_transfer.v1', 'send_notice.v1'] }));
    expect(preview.verdict).toMatchObject({
      error: {
        code: 'CAPABILITY_DENIED',
        next: 'preview_transfer.v1',
        message: expect.stringContaining('is not in the capabilities') as unknown,
      },
    });
    const w = world();
    w.runs.set('run_1', run({ capabilities: [] }));
    const deps = depsOf(w, { rolesGranting: (address) => (address === 'start_export.v1' ? ['ops', 'lead'] : []) });
    expect(await checkCall(command('start_export.v1', { account_id: 'A-1' }), deps, NOW)).toMatchObject({
      error: { next: 'a run with role ops or lead' },
    });
  });
});

describe('a call that passes the boundary', () => {
  it('is a read routed with its canonical arguments', async () => {
    const { verdict } = await verdictOf(command('lookup_account.v2', null, { raw: '{ "account_id" : "A-1" }' }));
    expect(verdict).toMatchObject({
      kind: 'read',
      run: { run_id: 'run_1' },
      tool: { address: 'lookup_account.v2' },
      canonical: canonicalArguments({ account_id: 'A-1' }),
    });
  });

  it('may call a retired version the run was granted', async () => {
    const { verdict } = await verdictOf(
      command('lookup_account.v1', { account_id: 'A-1' }),
      withRun({ capabilities: ['lookup_account.v1'] }),
    );
    expect(verdict).toMatchObject({ kind: 'read', tool: { address: 'lookup_account.v1' } });
  });

  it('makes a write with no preview its own proposal and grants it for the grant validity when the table allows', async () => {
    const { verdict } = await verdictOf(command('start_export.v1', { account_id: 'A-1' }));
    if (verdict.kind !== 'allow') return expect.fail(`decided ${verdict.kind}`);
    expect(verdict).toMatchObject({ implicit: true, ruleId: 'export-allow', grantExpiresAt: NOW + 600_000 });
    expect(verdict.proposal).toMatchObject({
      tool: 'start_export.v1',
      target: { type: 'tool_call', id: 'cmd_1', version: null },
      created_at: NOW,
      expires_at: NOW + 900_000,
    });
    expect(verdict.idempotencyKey).toBe(`run_1:${verdict.proposal.proposal_id}:commit`);
  });

  it('never grants a write for longer than its proposal lives', async () => {
    const w = world();
    const verdict = await checkCall(command('start_export.v1', { account_id: 'A-1' }), depsOf(w, { grantValidityMs: 2_000_000 }), NOW);
    expect(verdict).toMatchObject({ kind: 'allow', grantExpiresAt: NOW + 900_000 });
  });

  it('asks a person for a previewed commit, for no longer than its stored proposal lives', async () => {
    const { verdict } = await verdictOf(commitP1, storeProposal({ expires_at: NOW + 300_000 }));
    expect(verdict).toMatchObject({
      kind: 'approval',
      implicit: false,
      ruleId: 'transfer-lead',
      approverRole: 'lead',
      expiresAt: NOW + 300_000,
      proposal: { proposal_id: 'p_1' },
    });
  });

  it('decides a commit on its stored proposal’s diff: records affected and amount', async () => {
    const bulk = await verdictOf(commitP1, storeProposal({ diff: { ...proposal().diff, affected_records: 101 } }));
    expect(bulk.verdict).toMatchObject({ kind: 'approval', ruleId: 'bulk-ops', approverRole: 'ops', expiresAt: NOW + 900_000 });
    const money = await verdictOf(commitP1, storeProposal({ diff: { ...proposal().diff, amount: { minor: 100_001, currency: 'EUR' } } }));
    expect(money.verdict).toMatchObject({ kind: 'approval', ruleId: 'money-ops' });
  });

  it('routes a retried commit whose operation finished, without a grant, under its idempotency key', async () => {
    const { verdict } = await verdictOf(commitP1, (w) => {
      storeProposal({ expires_at: NOW - 1 }, 'consumed')(w);
      w.idempotency.set('run_1:p_1:commit', { state: 'succeeded' });
    });
    expect(verdict).toMatchObject({ kind: 'finished', idempotencyKey: 'run_1:p_1:commit', proposal: { proposal_id: 'p_1' } });
  });

  it('routes a commit whose approved write is still running to the executor, which answers IN_PROGRESS, never PROPOSAL_CONSUMED', async () => {
    const { verdict } = await verdictOf(commitP1, (w) => {
      storeProposal({ expires_at: NOW }, 'consumed')(w);
      w.idempotency.set(idempotencyKeyOf('run_1', 'p_1'), { state: 'in_flight' });
    });
    expect(verdict).toMatchObject({ kind: 'finished', idempotencyKey: 'run_1:p_1:commit' });
  });
});
