import { describe, expect, it } from 'vitest';
import { canonicalArguments, canonicalJson } from '@gatehouse/contracts';
import { buildProposal, idempotencyKeyOf, implicitProposal } from '@gatehouse/governance';
import { NOW, run, sendNotice, startExport } from './fixtures.js';

const origin = { run_id: 'run_1', tenant: 'acme', principal: 'agent:bot', environment: 'staging' };

describe('building a proposal from a preview’s draft', () => {
  const draft = {
    arguments: { to: { city: 'Lyon', line1: '1 rue' }, amount: 5 },
    target: { type: 'customer', id: 'C-1', version: 4 },
    effect: 'Move C-1 to Lyon',
    diff: {
      changes: [
        { field: 'city', before: 'Paris', after: 'Lyon' },
        { field: 'line2', before: null, after: undefined },
        { field: 'address', before: { b: 1, a: 2 }, after: null },
      ],
      recipients: ['c1@example.com'],
      amount: { minor: 500, currency: 'EUR' },
      affectedRecords: 2,
      irreversible: ['sent'],
    },
  };

  it('stores the canonical arguments and their hash for the commit tool, for the run of the order', () => {
    const proposal = buildProposal(draft, 'commit_move.v1', origin, 60_000, NOW);
    const { canonical, sha256 } = canonicalArguments(draft.arguments);
    expect(proposal).toMatchObject({
      tool: 'commit_move.v1',
      arguments: canonical,
      arguments_sha256: sha256,
      target: draft.target,
      effect: draft.effect,
      ...origin,
      created_at: NOW,
      expires_at: NOW + 60_000,
    });
    expect(proposal.proposal_id).toMatch(/^p_[0-9a-f]{24}$/);
  });

  it('writes each change’s before and after as canonical JSON, null when absent', () => {
    expect(buildProposal(draft, 'commit_move.v1', origin, 60_000, NOW).diff).toEqual({
      changes: [
        { field: 'city', before: '"Paris"', after: '"Lyon"' },
        { field: 'line2', before: null, after: null },
        { field: 'address', before: canonicalJson({ a: 2, b: 1 }), after: null },
      ],
      recipients: ['c1@example.com'],
      amount: { minor: 500, currency: 'EUR' },
      affected_records: 2,
      irreversible: ['sent'],
    });
  });

  it('gives every proposal a new id', () => {
    const ids = new Set(Array.from({ length: 50 }, () => buildProposal(draft, 'commit_move.v1', origin, 1, NOW).proposal_id));
    expect(ids.size).toBe(50);
  });
});

describe('the proposal of a write with no preview', () => {
  const canonical = canonicalArguments({ account_id: 'A-1', text: 'hi' });

  it('targets the call itself, changes each argument field, one record, no recipients or amount', () => {
    const proposal = implicitProposal(
      'cmd_7',
      run(),
      startExport,
      { account_id: 'A-1' },
      canonicalArguments({ account_id: 'A-1' }),
      NOW,
      900_000,
    );
    expect(proposal).toMatchObject({
      tool: 'start_export.v1',
      target: { type: 'tool_call', id: 'cmd_7', version: null },
      effect: 'Call start_export.v1: Export an account.',
      diff: {
        changes: [{ field: 'account_id', before: null, after: '"A-1"' }],
        recipients: [],
        amount: null,
        affected_records: 1,
        irreversible: [],
      },
      run_id: 'run_1',
      tenant: 'acme',
      principal: 'agent:bot',
      environment: 'production',
      created_at: NOW,
      expires_at: NOW + 900_000,
    });
  });

  it('is irreversible when the tool acts outside the tenant', () => {
    const proposal = implicitProposal('cmd_7', run(), sendNotice, { account_id: 'A-1', text: 'hi' }, canonical, NOW, 1);
    expect(proposal.diff.irreversible).toEqual(['send_notice.v1 acts outside the tenant and cannot be recalled']);
    expect(proposal.arguments).toBe(canonical.canonical);
    expect(proposal.arguments_sha256).toBe(canonical.sha256);
  });
});

describe('the id of a write with no preview', () => {
  const propose = (commandId: string, args: Record<string, unknown>, at = NOW) =>
    implicitProposal(commandId, run(), startExport, args, canonicalArguments(args), at, 900_000).proposal_id;

  it('is the same each time the same command is decided, so the write keeps its idempotency key', () => {
    const first = propose('cmd_7', { account_id: 'A-1' });
    expect(first).toMatch(/^p_[0-9a-f]{24}$/);
    expect(propose('cmd_7', { account_id: 'A-1' }, NOW + 60_000)).toBe(first);
  });

  it('differs for another command, and for the same command id with other arguments', () => {
    const first = propose('cmd_7', { account_id: 'A-1' });
    expect(propose('cmd_8', { account_id: 'A-1' })).not.toBe(first);
    expect(propose('cmd_7', { account_id: 'A-2' })).not.toBe(first);
  });
});

describe('the idempotency key of a write', () => {
  it('is run, proposal and operation, made by trusted code', () => {
    expect(idempotencyKeyOf('run_1', 'p_2')).toBe('run_1:p_2:commit');
  });
});
