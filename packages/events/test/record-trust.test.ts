import { describe, expect, it } from 'vitest';
import { sha256Hex } from '@gatehouse/contracts';
import {
  checkRecord,
  EventSigner,
  generateSigningKey,
  keyRing,
  ORDER_CLOCK_MARGIN_MS,
  parseSigningKey,
  parseTrustedKeys,
  untrustedReason,
} from '@gatehouse/events';
import type { ExecutionOrder, ToolCommand } from '@gatehouse/events';

const policy = generateSigningKey('policy-1');
const signer = new EventSigner(parseSigningKey(policy.signingKey));
const trust = { keys: keyRing({ policy: parseTrustedKeys(policy.trustedKey) }), answeredRetentionMs: ORDER_CLOCK_MARGIN_MS + 60_000 };
const NOW = 1_700_000_000_000;

const order: ExecutionOrder = {
  schema_version: 1,
  order_id: 'ord-1',
  command_id: 'cmd-1',
  run_id: 'run-1',
  tenant: 'acme',
  principal: 'agent:bot',
  environment: 'production',
  tool: 'get_customer.v1',
  effect: 'read',
  arguments: '{}',
  arguments_sha256: sha256Hex('{}'),
  proposal_id: null,
  approval: null,
  idempotency_key: null,
  deadline_at: null,
  issued_at: NOW - 1_000,
};

describe('the check a reader makes before its handler sees a record', () => {
  it('lets a signed order within the age answered commands are remembered through, and refuses an older one as stale', () => {
    expect(checkRecord('execute', order, signer.headersFor('execute', order), trust, NOW)).toMatchObject({ ok: true, role: 'policy' });
    const old = { ...order, issued_at: NOW - 60_001 };
    expect(checkRecord('execute', old, signer.headersFor('execute', old), trust, NOW)).toMatchObject({ ok: false, reason: 'stale' });
  });

  // An issuer whose clock runs ahead would otherwise stretch the window in which a replay is let through.
  it('refuses an order issued further in the future than clocks may disagree', () => {
    const ahead = { ...order, issued_at: NOW + ORDER_CLOCK_MARGIN_MS };
    expect(checkRecord('execute', ahead, signer.headersFor('execute', ahead), trust, NOW)).toMatchObject({ ok: true });
    const further = { ...order, issued_at: NOW + ORDER_CLOCK_MARGIN_MS + 1 };
    expect(checkRecord('execute', further, signer.headersFor('execute', further), trust, NOW)).toMatchObject({
      ok: false,
      reason: 'stale',
    });
  });

  // Late orders are answered TIMEOUT where they are handled; the check is about who issued them.
  it('does not judge an order’s deadline', () => {
    const late = { ...order, deadline_at: NOW - 5_000 };
    expect(checkRecord('execute', late, signer.headersFor('execute', late), trust, NOW)).toMatchObject({ ok: true });
  });

  it('passes records of topics whose events nobody signs (the agents’ commands)', () => {
    const command: ToolCommand = {
      schema_version: 1,
      command_id: 'c',
      run_id: 'r',
      tenant: 't',
      tool: 'x.v1',
      arguments: '{}',
      sent_at: NOW,
      deadline_at: null,
    };
    expect(checkRecord('commands', command, undefined, trust, NOW)).toBeUndefined();
  });

  it('names the DLQ reason after the refusal', () => {
    expect(untrustedReason('wrong_role')).toBe('untrusted_wrong_role');
  });
});
